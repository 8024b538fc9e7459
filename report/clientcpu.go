package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"trafficlab/result"
)

// writeClientCPU tables the CPU client pods spent themselves, when the run
// modelled it, and says which clients fell behind their rate for want of it.
func writeClientCPU(b *strings.Builder, r *result.Result) {
	var pods int
	for _, c := range r.Clients {
		pods += len(c.Pods)
	}
	if pods == 0 {
		return
	}
	fmt.Fprintf(b, "\nClient CPU: each client pod's own work (building requests, opening connections)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "POD\tNODE\tCORES\tOF ITS CPU\tPER REQUEST SENT\t\n")
	for _, c := range r.Clients {
		for _, p := range c.Pods {
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t\n", p.Name, p.Node, p.CPUCores, ofCPU(r, p), perRequest(c))
		}
	}
	tw.Flush()
	for _, c := range r.Clients {
		if s := clientCPUSentence(r, &c); s != "" {
			fmt.Fprintf(b, "%s\n", wrap(s, 92))
		}
	}
}

// clientCPUSentence says what client c's own CPU did to its requests: it fell
// behind its rate and left some unsent, or sent some late, or its requests waited
// for it; "" when it kept up with room to spare.
func clientCPUSentence(r *result.Result, c *result.Client) string {
	switch {
	case c.Behind > 0:
		return behindSentence(r, c)
	case c.MaxLateS > 0:
		return fmt.Sprintf("%s fell behind its rate at times: its own CPU could not keep up, and it sent some requests as late as %s after "+
			"their time, every one in the end. Latencies count from when each request fell due, that wait included.",
			c.Name, GoDuration(c.MaxLateS))
	}
	if held := heldBy(r, c); held != "" {
		return fmt.Sprintf("%s's own CPU was spent: %s, and its requests waited for it before they were sent.", c.Name, held)
	}
	return ""
}

// ofCPU is a client pod's CPU over what it could use: its limit, else its node's
// cores.
func ofCPU(r *result.Result, p result.ClientPod) string {
	switch {
	case p.CPUUtilization == 0:
		return "-"
	case p.CPULimit > 0:
		return fmt.Sprintf("%s of its %s-CPU limit", percent(p.CPUUtilization, 0), trimFloat(p.CPULimit))
	}
	if n := nodeNamed(r, p.Node); n != nil {
		return fmt.Sprintf("%s of %s cores", percent(p.CPUUtilization, 0), trimFloat(n.CPU))
	}
	return percent(p.CPUUtilization, 0)
}

func perRequest(c result.Client) string {
	if c.CPUPerRequestMS == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f ms", c.CPUPerRequestMS)
}

// behindSentence says that client c sent fewer requests than its rate asked for,
// and what held its CPU back: its limit, or its node's cores taken by others.
func behindSentence(r *result.Result, c *result.Client) string {
	due := c.Due
	if due == 0 { // a result from before Due was recorded
		due = c.Sent + c.Behind
	}
	s := fmt.Sprintf("%s fell behind its rate: its own CPU could not keep up, so of the %s that fell due it sent %s "+
		"and never sent the other %s; it sent some as late as %s after their time",
		c.Name, counted(due, "request"), count(due-c.Behind), count(c.Behind), GoDuration(c.MaxLateS))
	if why := heldBy(r, c); why != "" {
		s += ". " + strings.Replace(why, "its node", "Its node", 1) // a pod's name stays as it is
	}
	return s + ". Latencies count from when each request fell due, that wait included; the run's rate and throughput measure the client here, not the service."
}

// heldBy says what capped client c's CPU: the limit of a pod that used it all, or a
// node whose cores were all in use.
func heldBy(r *result.Result, c *result.Client) string {
	for _, p := range c.Pods {
		if p.CPULimit > 0 && p.CPUUtilization >= 0.9 {
			return fmt.Sprintf("%s used %s of its %s-CPU limit", p.Name, percent(p.CPUUtilization, 0), trimFloat(p.CPULimit))
		}
	}
	for _, p := range c.Pods {
		if n := nodeNamed(r, p.Node); n != nil && n.CPU > 0 && n.CPUUtilization >= 0.9 {
			return fmt.Sprintf("its node %s was %s busy, so it got only its share of the cores", n.Name, percent(n.CPUUtilization, 0))
		}
	}
	return ""
}
