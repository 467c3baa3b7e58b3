package s3store_test

import (
	"testing"

	"backup/backupset"
	"backup/backupset/s3store"
	"backup/backupset/s3store/s3test"
	"backup/backupset/storetest"
)

func TestS3Store(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	storetest.Run(t, func(t *testing.T) backupset.Store {
		st, err := s3store.Open(t.Context(), "s3://"+srv.Bucket(t)+"/sets/app", s3store.Options{PathStyle: true})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
