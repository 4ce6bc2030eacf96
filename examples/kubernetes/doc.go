// Package kubernetes holds no code: its tests decode the Kubernetes manifests
// of this directory (and cutover/) strictly into the typed Kubernetes API
// objects and check the cross-references the design insists on against the
// worker image in docker/mm2 and the Job image in examples/job, and build and
// run the Job image as cutover/job.yaml runs it. It is a module of its own so
// that the Kubernetes API modules never enter the library's go.mod; it
// requires the library's module through a replace of ../.. for the sandbox
// and podman helpers the image test uses.
package kubernetes
