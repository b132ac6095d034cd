package cluster

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Status is what `rosemary cluster status` shows.
type Status struct {
	Devices   []DeviceInfo `json:"devices"`
	Databases []Map        `json:"databases"`
}

// ReadStatus lists the live devices and every database's map.
func ReadStatus(ctx context.Context, cli *clientv3.Client) (*Status, error) {
	ds, err := Devices(ctx, cli)
	if err != nil {
		return nil, err
	}
	resp, err := cli.Get(ctx, dbsPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("%w: list databases: %w", ErrEtcd, err)
	}
	st := &Status{Devices: ds}
	for _, kv := range resp.Kvs {
		owner, name, ok := strings.Cut(strings.TrimPrefix(string(kv.Key), dbsPrefix), "/")
		if !ok {
			continue // not a map (an older layout's key)
		}
		m, _, err := readMap(ctx, cli, owner, name)
		if err != nil {
			return nil, err
		}
		st.Databases = append(st.Databases, *m)
	}
	return st, nil
}
