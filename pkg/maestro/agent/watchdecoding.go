package agent

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	sigsjson "sigs.k8s.io/json"
)

// newWatchingClient returns a dynamic client whose watches read each event's envelope in one pass.
//
// client-go's JSON serializer first reads an event's kind, which takes a whole pass of encoding/json over the
// event (the embedded object included) only to find that the envelope has none, and then decodes the
// envelope in a second pass before the object is decoded from it in a third. The agent's watches of
// HostedClusters spent 7 % of its CPU on that first pass. The envelope is always a WatchEvent, so it is
// decoded as one directly; everything else, the objects included, is decoded by client-go as before.
func newWatchingClient(cfg *rest.Config) (*dynamic.DynamicClient, error) {
	config := dynamic.ConfigFor(cfg)
	config.NegotiatedSerializer = watchEventSerializer{config.NegotiatedSerializer}
	// What dynamic.NewForConfig sets: the dynamic client builds every path itself.
	config.GroupVersion = nil
	config.APIPath = "/if-you-see-this-search-for-the-break"
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	restClient, err := rest.UnversionedRESTClientForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	return dynamic.New(restClient), nil
}

// watchEventSerializer is a negotiated serializer whose JSON stream serializer decodes watch events directly.
type watchEventSerializer struct{ runtime.NegotiatedSerializer }

func (s watchEventSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := append([]runtime.SerializerInfo(nil), s.NegotiatedSerializer.SupportedMediaTypes()...)
	for i, info := range infos {
		if info.MediaType == runtime.ContentTypeJSON && info.StreamSerializer != nil {
			stream := *info.StreamSerializer
			stream.Serializer = watchEventDecoder{stream.Serializer}
			infos[i].StreamSerializer = &stream
		}
	}
	return infos
}

// watchEventDecoder decodes into a WatchEvent as the JSON serializer does (case-sensitive, numbers kept as
// they are; the object stays raw for the embedded decoder), without first reading the event for its kind.
type watchEventDecoder struct{ runtime.Serializer }

func (d watchEventDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	event, ok := into.(*metav1.WatchEvent)
	if !ok {
		return d.Serializer.Decode(data, defaults, into)
	}
	*event = metav1.WatchEvent{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, event); err != nil {
		return nil, nil, err
	}
	return event, &schema.GroupVersionKind{}, nil
}
