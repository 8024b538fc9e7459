package emulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"trafficlab/emulate/containerlog"
)

// podLog is the container runtime's writer of one pod's stdout to its node's disk:
// a `trafficlab containerlog` process (emulate/containerlog) reading the app's
// stdout pipe, outside the pod's control group, as containerd runs outside the
// pods.
type podLog struct {
	cmd    *exec.Cmd
	appEnd *os.File // the pipe's write end, the app's stdout until it has started
	out    bytes.Buffer
	stderr bytes.Buffer
	exited chan struct{}
	stats  containerlog.Stats
}

// startPodLog starts the writer of app's stdout to file, creating file's directory,
// and makes the pipe app's stdout; call started once app has been started.
func startPodLog(spawn func(*exec.Cmd) error, exe, file string, app *exec.Cmd) (*podLog, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, err
	}
	// A pipe of the kernel's default size, 64 KiB, as the shim's os.Pipe.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	l := &podLog{appEnd: w, exited: make(chan struct{})}
	l.cmd = exec.Command(exe, "containerlog", "--file", file)
	l.cmd.Stdin, l.cmd.Stdout, l.cmd.Stderr = r, &l.out, &l.stderr
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // as a pod's (startServer)
	err = spawn(l.cmd)
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("its log writer: %w", err)
	}
	go func() {
		_ = l.cmd.Wait()
		close(l.exited)
	}()
	app.Stdout = w
	return l, nil
}

// started closes this process's copy of the app's end of the pipe, so that the
// writer reads the end of it when the app exits.
func (l *podLog) started() { l.appEnd.Close() }

// logDrain bounds the wait for a log writer after its app has gone: it writes what
// is still in the pipe, on a disk that may be behind.
const logDrain = 10 * time.Second

// wait waits for the writer to write what is left and end, or kills it after
// logDrain, and reads what it reports.
func (l *podLog) wait() error {
	select {
	case <-l.exited:
	case <-time.After(logDrain):
		_ = l.cmd.Process.Kill()
		<-l.exited
		return fmt.Errorf("a log writer did not finish within %v of its pod", logDrain)
	}
	if err := json.Unmarshal(l.out.Bytes(), &l.stats); err != nil {
		return errors.Join(fmt.Errorf("a log writer: %s", bytes.TrimSpace(l.stderr.Bytes())), err)
	}
	return nil
}
