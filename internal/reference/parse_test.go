package reference

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// parseDuration and parseQuantity accept what the scenario decoder accepts.
func parseDuration(s string) error {
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		return errors.New("negative")
	}
	return err
}

func parseQuantity(s string) error {
	q, err := resource.ParseQuantity(s)
	if err == nil && q.Sign() < 0 {
		return errors.New("negative")
	}
	return err
}
