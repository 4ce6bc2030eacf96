// Package kubernetes holds no code: its tests decode the Kubernetes manifests
// of this directory (cutover/ and cutover/resume/) strictly into the typed
// Kubernetes API objects and check the cross-references the design insists
// on against the worker image in docker/mm2 and the Job image in
// examples/job; build and run the Job image as cutover/job.yaml runs it;
// send every manifest to a real API server (server-side dry run, strict
// validation); and run the worker Deployment and both Jobs with the real
// images on the single-node Kubernetes of internal/kube. It is a module of
// its own so that the Kubernetes API modules never enter the library's
// go.mod; it requires the library's module through a replace of ../.. for
// the sandbox, podman and cluster helpers the tests use.
package kubernetes
