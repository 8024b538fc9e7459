package simulate

import "trafficlab/result"

// serviceConfigs records how each server Deployment was configured to end its pods
// and, when services call services, what each service's pods did.
func (e *Engine) serviceConfigs() []result.Service {
	out := e.sc.ServiceConfigs()
	for i, n := range e.appCloses.resets {
		out[i].IdleCloseResets = n
	}
	if e.graph {
		for i := range out {
			f := &e.svcFigures[i]
			lat := f.latency.Latency()
			out[i].Calls, out[i].Requests, out[i].Errors, out[i].LatencyMS = true, f.requests, f.errors, &lat
		}
	}
	return out
}
