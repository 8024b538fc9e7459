// Package localdns is the local test cluster's DNS (hack/localcluster.sh): the
// emulator's clusterdns server, fed from the API server's Services and
// EndpointSlices through watches, as CoreDNS's kubernetes plugin is. A Service's
// name answers with its ClusterIP, a headless Service's with its ready pods.
// Real clusters run CoreDNS; this stands in for it where no image of it can be
// pulled.
package localdns

import (
	"context"
	"math/rand/v2"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"trafficlab/emulate/clusterdns"
)

// Serve answers on addr for the Services cs watches, until ctx ends.
func Serve(ctx context.Context, cs kubernetes.Interface, addr string, rng *rand.Rand) error {
	srv, err := clusterdns.Listen(addr, rng)
	if err != nil {
		return err
	}
	defer srv.Close()
	f := informers.NewSharedInformerFactory(cs, 0)
	services, slices := f.Core().V1().Services(), f.Discovery().V1().EndpointSlices()
	update := func(ns, name string) {
		svc, err := services.Lister().Services(ns).Get(name)
		if err != nil {
			srv.Set(clusterdns.Name(name, ns), nil) // gone: NXDOMAIN
			return
		}
		srv.Set(clusterdns.Name(name, ns), answer(svc, slices))
	}
	onService := func(obj any) {
		if s, ok := obj.(*corev1.Service); ok {
			update(s.Namespace, s.Name)
		} else if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			if s, ok := d.Obj.(*corev1.Service); ok {
				update(s.Namespace, s.Name)
			}
		}
	}
	onSlice := func(obj any) {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if d, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
			s, ok = d.Obj.(*discoveryv1.EndpointSlice)
		}
		if ok {
			update(s.Namespace, s.Labels[discoveryv1.LabelServiceName])
		}
	}
	services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onService,
		UpdateFunc: func(_, o any) { onService(o) }, DeleteFunc: onService})
	slices.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onSlice,
		UpdateFunc: func(_, o any) { onSlice(o) }, DeleteFunc: onSlice})
	f.Start(ctx.Done())
	<-ctx.Done()
	f.Shutdown()
	return nil
}

// answer is what svc's name resolves to: its ClusterIP, or for a headless Service
// the addresses of its ready endpoints (CoreDNS plugin/kubernetes
// endpointsliceReady: a nil condition counts as ready).
func answer(svc *corev1.Service, slices discoveryinformers.EndpointSliceInformer) []netip.Addr {
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		if a, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil {
			return []netip.Addr{a}
		}
		return nil
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name})
	list, err := slices.Lister().EndpointSlices(svc.Namespace).List(sel)
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, s := range list {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				if ip, err := netip.ParseAddr(a); err == nil {
					out = append(out, ip)
				}
			}
		}
	}
	return out
}
