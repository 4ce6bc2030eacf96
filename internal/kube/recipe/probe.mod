module mm2cutover.local/kubeprobe

go 1.24
