package importer

import (
	"strings"
	"testing"
)

// Each way a container names a Service is read, and text that only looks like
// one is not.
func TestAddresses(t *testing.T) {
	for _, tc := range []struct {
		text       string
		addressVar bool
		want       string
	}{
		{"cart:7070", false, "cart port 7070"},
		{"http://cart:8080/items?x=1", false, "cart port 8080"},
		{"https://cart/", false, "cart"},
		{"dns:///orders.shop.svc.cluster.local:50051", false, "orders.shop port 50051"},
		{"--payment=http://payment.shop:8080/charge", false, "payment.shop port 8080"},
		{"redis://user:secret@redis-cart:6379/0", false, "redis-cart port 6379"},
		{"cart:7070,checkout:5050", false, "cart port 7070; checkout port 5050"},
		{"reviews", true, "reviews"},
		// A bare name outside an address variable, or among other words, is no address.
		{"reviews", false, ""},
		{"run the cart", true, ""},
		// Not the cluster's: a name with a domain, a port that is no number, a listen address.
		{"https://api.exchange.example.com/v1", false, ""},
		{"cart:http", false, ""},
		{":8080", false, ""},
		{"Cart:80", false, ""},
	} {
		t.Run(tc.text, func(t *testing.T) {
			var got []string
			for _, a := range addresses(mention{text: tc.text, addressVar: tc.addressVar}) {
				s := a.name
				if a.namespace != "" {
					s += "." + a.namespace
				}
				if a.port != "" {
					s += " port " + a.port
				}
				got = append(got, s)
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("addresses(%q, address variable %v) = %q, want %q", tc.text, tc.addressVar, g, tc.want)
			}
		})
	}
}

// Only variables whose names say they hold an address may hold a bare name.
func TestAddressVarName(t *testing.T) {
	for name, want := range map[string]bool{
		"REDIS_ADDR": true, "CART_SERVICE_ADDR": true, "REVIEWS_HOSTNAME": true, "DB_HOST": true, "API_URL": true,
		"UPSTREAM": true, "BACKENDS": true, "OTEL_SERVICE_NAME": false, "PORT": false, "CART_SERVICE": false, "HOST_IP_MODE": false,
	} {
		if got := addressVarName.MatchString(name); got != want {
			t.Errorf("%s: address variable %v, want %v", name, got, want)
		}
	}
}
