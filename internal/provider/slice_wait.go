package provider

import (
	"context"
	"sync"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// keptInState ends the error of a creation whose wait did not end well while the pool lives on.
const keptInState = "\n\nThe node pool is in state, so nothing is lost or duplicated: Terraform marks this slice " +
	"tainted and the next apply replaces it. To keep the pool instead once it is ready, run terraform untaint on this slice first."

// reachGrace is how long, once GKE has created a pool, the API server of its cluster gets to answer
// before its hosts are given up as not observable from here (a private endpoint, a refused token):
// those do not change in the time hosts take to register, and waiting the whole host_wait_timeout
// for them would only delay the apply.
const reachGrace = time.Minute

// hostWait waits in the background until want hosts of a pool are Ready Kubernetes nodes. Its
// methods are safe on a nil *hostWait, which stands for no wait.
type hostWait struct {
	done    chan struct{} // closed when the wait ends, well or not
	cancel  context.CancelFunc
	k       *kube.Client
	err     error
	stopped sync.Once
}

func startHostWait(ctx context.Context, client *gke.Client, access clusterAccess, pool string, want int) *hostWait {
	ctx, cancel := context.WithCancel(ctx)
	w := &hostWait{done: make(chan struct{}), cancel: cancel}
	w.k, w.err = kubeClient(client, access)
	if w.err != nil {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		// Watched: the interval only spaces new listings after a watch ends or fails.
		_, w.err = w.k.WaitForSliceHosts(ctx, pool, want, kube.DefaultPollInterval)
	}()
	return w
}

// result returns how the wait ended, once GKE reports the pool created: the hosts get up to timeout
// (host_wait_timeout) more to be Ready, provided the API server answers within reachGrace. An
// error for which kube.CannotObserve holds says nothing of the hosts, only that they cannot be
// seen from here.
func (w *hostWait) result(ctx context.Context, timeout time.Duration) error {
	if w == nil {
		return nil
	}
	defer w.stop()
	select {
	case <-w.done:
		return w.err
	default:
	}
	reach, cancel := context.WithTimeout(ctx, min(reachGrace, timeout))
	err := w.k.Reach(reach, kube.DefaultPollInterval)
	cancel()
	if err != nil {
		return err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-w.done:
	case <-timer.C:
	case <-ctx.Done():
	}
	w.stop()
	return w.err
}

// stop ends the wait and waits for it to return.
func (w *hostWait) stop() {
	if w == nil {
		return
	}
	w.stopped.Do(func() {
		w.cancel()
		<-w.done
		if w.k != nil {
			w.k.Close()
		}
	})
}
