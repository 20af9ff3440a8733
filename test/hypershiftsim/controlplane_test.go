package hypershiftsim

import (
	"regexp"
	"testing"
)

// TestControlPlanePodNames: a pod's name is <app>-<template hash>-<five characters>, also for a cluster
// whose hash has a small upper half (here 6,782 and 236: fewer than five digits).
func TestControlPlanePodNames(t *testing.T) {
	name := regexp.MustCompile(`^kube-apiserver-[bcdfghjklmnpqrstvwxz2456789]+-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	for _, uid := range []string{"00000000-0000-0000-0000-000000319233", "00000000-0000-0000-0000-000000473643", "7d3c5b57-0b8e-4c43-9c61-34a5d1f0e0aa"} {
		if got := ControlPlanePodName(uid, "kube-apiserver"); !name.MatchString(got) {
			t.Errorf("the kube-apiserver pod of %s is named %q", uid, got)
		}
	}
	if got := ControlPlanePodName("7d3c5b57-0b8e-4c43-9c61-34a5d1f0e0aa", "etcd"); got != "etcd-0" {
		t.Errorf("etcd's pod is named %q, want etcd-0", got)
	}
}
