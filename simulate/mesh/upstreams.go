package mesh

import "trafficlab/model/sidecar"

// An envoy's upstream services. Istio configures circuit breakers and load
// balancing per destination cluster (a DestinationRule's trafficPolicy, one Envoy
// cluster per service), so a pod whose app calls several services gives each its
// own: the first service an envoy sends to uses those made with the envoy (a
// client pod's envoy has only that one), the others get theirs when first called.

// breakerOf is envoy x's circuit breakers for upstream service svc.
func (x *envoy) breakerOf(svc int32) *sidecar.Breaker {
	if svc == x.breakerSvc {
		return x.breaker
	}
	return x.otherBreaker(svc)
}

// otherBreaker is breakerOf beyond the envoy's own service: it claims the envoy's
// breakers for the first service called, and makes the others'.
func (x *envoy) otherBreaker(svc int32) *sidecar.Breaker {
	if x.breakerSvc < 0 {
		x.breakerSvc = svc
		return x.breaker
	}
	b, ok := x.breakers[svc]
	if !ok {
		if x.breakers == nil {
			x.breakers = map[int32]*sidecar.Breaker{}
		}
		b = sidecar.NewBreaker(x.thresholds)
		x.breakers[svc] = b
	}
	return b
}

// balancerOf is worker w's load balancer for upstream service svc.
func (x *envoy) balancerOf(w int16, svc int32) sidecar.Balancer {
	if svc == x.breakerSvc {
		return x.workers[w].lb
	}
	return x.otherBalancer(w, svc)
}

// otherBalancer is balancerOf beyond the envoy's own service.
func (x *envoy) otherBalancer(w int16, svc int32) sidecar.Balancer {
	x.otherBreaker(svc) // claims the first service for the envoy's own
	wk := &x.workers[w]
	if svc == x.breakerSvc {
		return wk.lb
	}
	lb, ok := wk.lbs[svc]
	if !ok {
		var err error
		if lb, err = sidecar.NewBalancer(x.lbPolicy, x.rng); err != nil {
			panic(err) // validation admits only known policies
		}
		if wk.lbs == nil {
			wk.lbs = map[int32]sidecar.Balancer{}
		}
		wk.lbs[svc] = lb
	}
	return lb
}
