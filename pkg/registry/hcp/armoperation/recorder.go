package armoperation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/aro-hcp/hcp-apiserver/apis/hcp"
	"github.com/aro-hcp/hcp-apiserver/apis/hcp/v1alpha1"
	"github.com/aro-hcp/hcp-apiserver/pkg/registry/claims"
	hcpregistry "github.com/aro-hcp/hcp-apiserver/pkg/registry/generic"
)

// Recorder creates the ARMOperation a create of the object it follows asks for, in that create's own
// write (hcp.ARMOperationAnnotation), as the armoperations store would create it: the same defaults,
// validation, initial state, encoding and etcd key. A PUT through the ARM frontend is then one write, and
// its operation exists exactly when its object does.
type Recorder struct {
	scheme     *runtime.Scheme
	strategy   hcpregistry.Strategy[*hcp.ARMOperation]
	authorizer authorizer.Authorizer
	storage    claims.Storage
	// subscriptions is how ARMSubscriptions are stored: their keys, for a create that requires one unchanged.
	subscriptions claims.Storage
}

var _ hcpregistry.OperationRecorder = &Recorder{}

// NewRecorder returns the recorder of the armoperations that optsGetter stores. authz decides whether a
// caller may create them; nil lets every caller, as a server without authorization does.
func NewRecorder(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, authz authorizer.Authorizer) (*Recorder, error) {
	opts, err := optsGetter.GetRESTOptions(hcp.Resource("armoperations"), &hcp.ARMOperation{})
	if err != nil {
		return nil, err
	}
	subscriptions, err := optsGetter.GetRESTOptions(hcp.Resource("armsubscriptions"), &hcp.ARMSubscription{})
	if err != nil {
		return nil, err
	}
	return &Recorder{scheme: scheme, strategy: NewStrategy(scheme), authorizer: authz,
		storage:       claims.NewStorage(opts.StorageConfig, opts.ResourcePrefix),
		subscriptions: claims.NewStorage(subscriptions.StorageConfig, subscriptions.ResourcePrefix)}, nil
}

var (
	annotationPath          = field.NewPath("metadata", "annotations").Key(hcp.ARMOperationAnnotation)
	subscriptionVersionPath = field.NewPath("metadata", "annotations").Key(hcp.ARMSubscriptionVersionAnnotation)
)

// Detach implements hcpregistry.OperationRecorder.
func (r *Recorder) Detach(ctx context.Context, resource, value, subscriptionVersion string) (string, func(context.Context, metav1.Object) (claims.Companion, error), error) {
	op, err := r.decode(value)
	if err != nil {
		return "", nil, apierrors.NewBadRequest(fmt.Sprintf("%s: not an ARMOperation: %v", annotationPath, err))
	}
	var version int64 // 0: the create requires nothing of the subscription
	if subscriptionVersion != "" {
		if version, err = strconv.ParseInt(subscriptionVersion, 10, 64); err != nil || version <= 0 {
			return "", nil, apierrors.NewBadRequest(fmt.Sprintf("%s: %q is not a resourceVersion of an ARMSubscription", subscriptionVersionPath, subscriptionVersion))
		}
	}
	if err := r.authorize(ctx, op.Name); err != nil {
		return "", nil, err
	}
	complete := func(ctx context.Context, target metav1.Object) (claims.Companion, error) {
		op := op.DeepCopy()
		op.Spec.Target = hcp.ARMOperationTarget{Resource: resource, Namespace: target.GetNamespace(), Name: target.GetName(),
			UID: target.GetUID(), Generation: target.GetGeneration()}
		// As the armoperations store creates one: system fields, initial state, validation.
		rest.FillObjectMetaSystemFields(op)
		if err := rest.BeforeCreate(r.strategy, genericapirequest.WithNamespace(ctx, ""), op); err != nil {
			return claims.Companion{}, err
		}
		key, err := r.storage.ClusterScopedKey(op.Name)
		if err != nil {
			return claims.Companion{}, apierrors.NewBadRequest(fmt.Sprintf("%s: %v", annotationPath, err))
		}
		_, stored, err := r.storage.Encode(ctx, key, op)
		if err != nil {
			return claims.Companion{}, err
		}
		if version > 0 {
			if err := r.requireSubscription(ctx, op.Spec.SubscriptionID, version); err != nil {
				return claims.Companion{}, err
			}
		}
		return claims.Companion{Key: key, Value: stored}, nil
	}
	return op.Name, complete, nil
}

// requireSubscription has the create of ctx written only while the ARMSubscription of subscriptionID is at
// version: the caller found its state to allow the create at that version, perhaps from a cache.
func (r *Recorder) requireSubscription(ctx context.Context, subscriptionID string, version int64) error {
	name := strings.ToLower(subscriptionID) // as ARMSubscriptions are named
	key, err := r.subscriptions.ClusterScopedKey(name)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s: %v", annotationPath, err))
	}
	changed := apierrors.NewConflict(hcp.Resource("armsubscriptions"), name,
		fmt.Errorf("it is no longer at resourceVersion %d, at which %s says its state allowed the create", version, subscriptionVersionPath))
	if !claims.Require(ctx, claims.Unchanged{Key: key, Revision: version, Changed: changed}) {
		return apierrors.NewInternalError(fmt.Errorf("the create cannot require its subscription unchanged"))
	}
	return nil
}

// decode reads value as a v1alpha1 ARMOperation, refusing fields it does not have, defaulted and converted
// as a request's body is.
func (r *Recorder) decode(value string) (*hcp.ARMOperation, error) {
	decoder := json.NewDecoder(bytes.NewReader([]byte(value)))
	decoder.DisallowUnknownFields()
	var external v1alpha1.ARMOperation
	if err := decoder.Decode(&external); err != nil {
		return nil, err
	}
	if external.Name == "" {
		return nil, fmt.Errorf("metadata.name is required")
	}
	r.scheme.Default(&external)
	op := &hcp.ARMOperation{}
	if err := r.scheme.Convert(&external, op, nil); err != nil {
		return nil, err
	}
	return op, nil
}

// authorize refuses a caller who may not create ARMOperations, as a create of one would: without its name,
// which a create's request does not carry (and so the delegated authorizer's cache answers the next one).
func (r *Recorder) authorize(ctx context.Context, name string) error {
	if r.authorizer == nil {
		return nil
	}
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewForbidden(hcp.Resource("armoperations"), name, fmt.Errorf("the request has no user"))
	}
	decision, reason, err := r.authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: user, Verb: "create", APIGroup: hcp.GroupName, APIVersion: v1alpha1.SchemeGroupVersion.Version,
		Resource: "armoperations", ResourceRequest: true,
	})
	if decision == authorizer.DecisionAllow {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("%s asks for an ARM operation, which the user may not create: %s", annotationPath, reason)
	}
	return apierrors.NewForbidden(hcp.Resource("armoperations"), name, err)
}
