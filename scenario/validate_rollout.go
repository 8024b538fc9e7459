package scenario

// Checks of a service's Deployment strategy and rollouts.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

var strategyTypes = []string{string(appsv1.RollingUpdateDeploymentStrategyType), string(appsv1.RecreateDeploymentStrategyType)}

// deployment checks strategy, minReadySeconds and rollouts as the API server's
// ValidateDeploymentSpec does (pkg/apis/apps/validation/validation.go:
// ValidateDeploymentStrategy, ValidateRollingUpdateDeployment,
// ValidatePositiveIntOrPercent, IsNotMoreThan100Percent), with its messages.
func (v *validator) deployment(path string, s *Service, duration time.Duration) {
	st := path + ".strategy"
	v.oneOf(st+".type", "strategy type", string(s.Strategy.Type), strategyTypes)
	if s.Strategy.Type == appsv1.RecreateDeploymentStrategyType && s.Strategy.RollingUpdate != nil {
		v.errorf(st+".rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
	}
	if ru := s.Strategy.RollingUpdate; ru != nil && s.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		surge := v.intOrPercent(st+".rollingUpdate.maxSurge", *ru.MaxSurge)
		unavailable := v.intOrPercent(st+".rollingUpdate.maxUnavailable", *ru.MaxUnavailable)
		if ru.MaxUnavailable.Type == intstr.String && unavailable > 100 {
			v.errorf(st+".rollingUpdate.maxUnavailable", "must not be greater than 100%%")
		}
		if surge == 0 && unavailable == 0 {
			v.errorf(st+".rollingUpdate.maxUnavailable", "may not be 0 when `maxSurge` is 0")
		}
	}
	if s.MinReadySeconds < 0 {
		v.errorf(path+".minReadySeconds", "must be greater than or equal to 0")
	}
	for i, r := range s.Rollouts {
		at := fmt.Sprintf("%s.rollouts[%d].at", path, i)
		switch {
		case !v.written(at):
			v.errorf(at, "is required: when the rollout starts, e.g. 10m")
		case r.At.Duration < 0:
			v.errorf(at, "must not be negative")
		case r.At.Duration >= duration:
			v.warnf(at, "is at or after the end of the run (spec.duration %s): this rollout never starts", duration)
		case i > 0 && r.At.Duration < s.Rollouts[i-1].At.Duration:
			v.errorf(at, "is before rollouts[%d] (%s): list rollouts in time order", i-1, s.Rollouts[i-1].At.Duration)
		}
	}
}

// intOrPercent checks a maxSurge or maxUnavailable value and returns its number (a
// count, or a percentage when written with %), -1 when invalid.
func (v *validator) intOrPercent(path string, x intstr.IntOrString) int {
	if x.Type == intstr.Int {
		if x.IntVal < 0 {
			v.errorf(path, "must be greater than or equal to 0")
			return -1
		}
		return int(x.IntVal)
	}
	if msgs := validation.IsValidPercent(x.StrVal); len(msgs) > 0 {
		v.errorf(path, "%s", msgs[0])
		return -1
	}
	pct, _ := strconv.Atoi(strings.TrimSuffix(x.StrVal, "%")) // digits, as IsValidPercent checked
	return pct
}
