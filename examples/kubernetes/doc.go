// Package kubernetes holds no code: its tests decode the Kubernetes manifests
// of this directory (and cutover/) strictly into the typed Kubernetes API
// objects and check the cross-references the design insists on against the
// worker image in docker/mm2. It is a module of its own so that the
// Kubernetes API modules never enter the library's go.mod.
package kubernetes
