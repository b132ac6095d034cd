package cluster

// StartEmbeddedEtcd lets the tests start their etcd as StartLocal does.
var StartEmbeddedEtcd = startEmbeddedEtcd
