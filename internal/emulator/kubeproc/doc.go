// Package kubeproc runs the Kubernetes processes behind the emulator's clusters: it finds the
// binaries that `make tools` builds (kube-apiserver, etcd, kube-scheduler, kube-controller-manager,
// KubeRay's ray-operator and the KubeRay CRDs), makes the key material of a cluster's
// kube-apiserver, starts the one etcd of an emulator (and reads and writes it through its JSON
// gateway) and each cluster's kube-apiserver, gives the flags kube-scheduler and
// kube-controller-manager run with, and supervises every child process as a Group.
//
// Nothing it starts outlives the emulator: each child runs in its own process group, gets SIGKILL
// through Pdeathsig when the emulator dies, and Group.StopAll (the emulator's Close) ends every
// group still running, SIGTERM then SIGKILL.
//
// It knows nothing of GKE's state or of the emulator's types: it imports the standard library
// only, and none of internal/emulator, internal/provider, internal/gke or internal/tpu.
// internal/emulator imports it, never the other way.
package kubeproc
