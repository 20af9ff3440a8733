package hypershiftsim

import (
	"context"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const (
	// RouterServiceName is the Service of HyperShift's router in the control-plane namespace, whose load
	// balancer serves the Routes of the control plane's services: the API's name resolves to it.
	RouterServiceName = "router"
	// AppsIngressServiceName is the Service whose load balancer serves the hosted cluster's applications
	// (*.apps), which the simulator keeps in the control-plane namespace for the hosted cluster's default
	// ingress: HyperShift's status reports no address for it.
	AppsIngressServiceName = "default-ingress"
)

// ensureLoadBalancers makes the two load balancers of a control plane and gives each an address, as a
// cloud's load balancer controller would; an address already there (a test's, say) is left alone.
func (s *Simulator) ensureLoadBalancers(ctx context.Context, namespace string) error {
	if ns, err := s.namespaces.Get(namespace); err == nil && ns.DeletionTimestamp != nil {
		return nil // nothing can be created in a namespace being deleted
	}
	for _, lb := range []struct {
		name  string
		ports []int32
		// network is the /24 the address is picked from: documentation ranges, which route nowhere.
		network string
	}{
		{RouterServiceName, []int32{443}, "198.51.100"},
		{AppsIngressServiceName, []int32{80, 443}, "203.0.113"},
	} {
		svc, err := s.kube.CoreV1().Services(namespace).Get(ctx, lb.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			svc = &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: lb.name, Namespace: namespace, Labels: map[string]string{ManagedByLabel: managedByValue}},
				Spec: corev1.ServiceSpec{
					Type:                          corev1.ServiceTypeLoadBalancer,
					AllocateLoadBalancerNodePorts: ptr.To(false),
					Selector:                      map[string]string{"app": lb.name},
				},
			}
			for _, port := range lb.ports {
				svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
					Name: fmt.Sprintf("port-%d", port), Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP,
				})
			}
			svc, err = s.kube.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{})
		}
		if err != nil {
			return err
		}
		if len(svc.Status.LoadBalancer.Ingress) > 0 {
			continue
		}
		svc = svc.DeepCopy()
		address := loadBalancerAddress(lb.network, namespace)
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: address}}
		if _, err := s.kube.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Gave a load balancer its address", "service", klog.KObj(svc), "address", address)
	}
	return nil
}

// loadBalancerAddress picks an address in network (a /24) for the control plane in namespace, the same
// one every time.
func loadBalancerAddress(network, namespace string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace))
	return fmt.Sprintf("%s.%d", network, 1+h.Sum32()%254)
}
