package app

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	"github.com/aro-hcp/hcp-apiserver/pkg/apiserver"
	"github.com/aro-hcp/hcp-apiserver/pkg/storagecompression"
)

// newDecodeStoredCommand returns "hcp-apiserver decode-stored": what an SRE reading etcd directly needs to
// read a value the server wrote, which is compressed (S2 against a dictionary built into the server) and
// protobuf.
func newDecodeStoredCommand() *cobra.Command {
	output := "json"
	cmd := &cobra.Command{
		Use:   "decode-stored [-o json|raw] < VALUE",
		Short: "Prints an object as the server stored it in etcd, read from standard input",
		Long: `decode-stored reads one value of etcd's, as the server wrote it, from standard
input and prints the object in it as JSON, or with -o raw the value decompressed
(protobuf, as auger and other tools for kube-apiserver's etcd read it):

  etcdctl get --print-value-only /registry/hcp.aro.azure.com/hcpclusters/NS/NAME | hcp-apiserver decode-stored

Values compressed with S2 or zstd, and uncompressed ones, read alike. Values of
resources encrypted with --encryption-provider-config cannot be read this way.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if output != "json" && output != "raw" {
				return fmt.Errorf("-o must be json or raw, not %q", output)
			}
			value, err := io.ReadAll(c.InOrStdin())
			if err != nil {
				return err
			}
			return decodeStored(c.OutOrStdout(), value, output == "raw")
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", output, "json: the object; raw: the value decompressed.")
	return cmd
}

// decodeStored writes the object value holds as JSON, or the value decompressed when raw is set.
// etcdctl's --print-value-only ends a value with a newline of its own: a value that reads only without its
// last newline is read so.
func decodeStored(w io.Writer, value []byte, raw bool) error {
	obj, data, err := decodeValue(value)
	if trimmed, ok := bytes.CutSuffix(value, []byte("\n")); err != nil && ok {
		if o, d, e := decodeValue(trimmed); e == nil {
			obj, data, err = o, d, nil
		}
	}
	if err != nil {
		return err
	}
	if raw {
		_, err = w.Write(data)
		return err
	}
	info, _ := runtime.SerializerInfoForMediaType(apiserver.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	return info.PrettySerializer.Encode(obj, w)
}

func decodeValue(value []byte) (runtime.Object, []byte, error) {
	data, _, err := storagecompression.Transformer(identity.NewEncryptCheckTransformer(), storagecompression.None).
		TransformFromStorage(context.Background(), value, nil)
	if err != nil {
		return nil, nil, err
	}
	obj, _, err := apiserver.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("the value is not an object the server stores: %w", err)
	}
	return obj, data, nil
}
