// Package storagecompression keeps the API's objects in etcd compressed.
//
// A cluster is about 2.8 KB of protobuf, most of it what every cluster says too: the kind and API
// version, the stems of its ARM IDs, its conditions' types, reasons and messages, the fields its managed
// fields name. S2 (the default, --storage-compression=s2) compresses each value against a dictionary built
// into the server that holds those, so what is left to store is mostly what is the cluster's own: a new
// cluster of 2,757 bytes is kept in 485, written in 4 µs and read in 2. zstd (the default before, still
// written with --storage-compression=zstd) keeps it in 1,230 bytes, in 20 µs, read in 8: the server writes
// every value and its watch cache reads every one, and zstd took about 4 % of the server's CPU under a
// stream of creates. etcd keeps each value in its raft log, its WAL and its bbolt pages: the smaller a
// value, the less etcd holds and writes.
//
// A compressed value says how in its first bytes, which neither protobuf (k8s\x00), JSON ({) nor an
// encrypted value (k8s:enc:) begins with:
//   - "hcs2", the dictionary's number (one byte), the CRC-32C of the value (4 bytes, little-endian), and
//     the S2 block against that dictionary; a dictionary, once shipped, never changes (a new one gets a
//     new number), so every value a server wrote reads in every later server;
//   - a zstd frame, recognised by the frame's magic number.
//
// Values are read compressed either way or not at all, whatever the server writes: changing the flag
// needs no migration, and each object is written in the new way on its next write.
//
// A resource whose values are encrypted (--encryption-provider-config) is written uncompressed: how well
// a value compresses says something of what it holds, and its length is visible to whoever reads etcd.
package storagecompression

import (
	"bytes"
	"context"
	"embed"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path"
	"strconv"
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
)

// Method is how values are written.
type Method string

const (
	// S2 compresses each value with S2 against the newest built-in dictionary.
	S2 Method = "s2"
	// Zstd compresses each value into a zstd frame of its own.
	Zstd Method = "zstd"
	// None writes values as the codec encodes them.
	None Method = "none"
)

// Methods are the values of --storage-compression.
var Methods = []Method{S2, Zstd, None}

var (
	// zstdMagic begins every zstd frame (RFC 8878, 3.1.1).
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	// s2Magic begins a value compressed with S2 against a built-in dictionary.
	s2Magic = []byte("hcs2")
)

// s2Header is s2Magic, the dictionary's number and the value's CRC-32C.
const s2Header = 4 + 1 + 4

// maxDecompressed bounds what one value decompresses to: etcd refuses requests over 1.5 MiB by default,
// and a value that claims to be far larger is corrupt, not an object.
const maxDecompressed = 64 << 20

var (
	encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true))
	decoder, _ = zstd.NewReader(nil, zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(maxDecompressed),
		zstd.WithDecoderConcurrency(0))
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// The built-in dictionaries, dictionaries/<number>.s2dict, each as s2.Dict.Bytes wrote it. They are made
// by hack/storage-dictionary and never changed once shipped: TestDictionariesNeverChange holds them to
// their checksums.
//
//go:embed dictionaries/*.s2dict
var dictionaryFiles embed.FS

// dictionaries are the built-in dictionaries by number; newest is the one values are written with.
var dictionaries, newest = loadDictionaries()

func loadDictionaries() (map[byte]*s2.Dict, byte) {
	files, err := dictionaryFiles.ReadDir("dictionaries")
	if err != nil {
		panic(err)
	}
	loaded := map[byte]*s2.Dict{}
	var newest byte
	for _, f := range files {
		number, err := strconv.ParseUint(strings.TrimSuffix(f.Name(), ".s2dict"), 10, 8)
		if err != nil || number == 0 {
			panic(fmt.Sprintf("storage dictionary %s: its name must be a number from 1 to 255", f.Name()))
		}
		content, err := dictionaryFiles.ReadFile(path.Join("dictionaries", f.Name()))
		if err != nil {
			panic(err)
		}
		d := s2.NewDict(content)
		if d == nil {
			panic(fmt.Sprintf("storage dictionary %s is not an S2 dictionary", f.Name()))
		}
		loaded[byte(number)] = d
		newest = max(newest, byte(number))
	}
	return loaded, newest
}

// RESTOptionsGetter is getter with every resource's values written as method says when the resource is
// not encrypted, and read compressed or not in any case.
func RESTOptionsGetter(getter generic.RESTOptionsGetter, method Method) generic.RESTOptionsGetter {
	return optionsGetter{RESTOptionsGetter: getter, method: method}
}

type optionsGetter struct {
	generic.RESTOptionsGetter
	method Method
}

func (g optionsGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil || opts.StorageConfig == nil {
		return opts, err
	}
	config := *opts.StorageConfig
	inner := config.Transformer
	if inner == nil {
		inner = identity.NewEncryptCheckTransformer() // as the etcd3 store's factory defaults it
	}
	method := g.method
	if inner != identity.NewEncryptCheckTransformer() {
		method = None
	}
	config.Transformer = Transformer(inner, method)
	opts.StorageConfig = &config
	return opts, nil
}

// Transformer is inner with what it stores compressed first as method says, and what it reads
// decompressed when it is compressed.
func Transformer(inner value.Transformer, method Method) value.Transformer {
	return transformer{inner: inner, method: method}
}

type transformer struct {
	inner  value.Transformer
	method Method
}

func (t transformer) TransformToStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, error) {
	var compressed []byte
	switch t.method {
	case S2:
		compressed = compressS2(data)
	case Zstd:
		compressed = encoder.EncodeAll(data, make([]byte, 0, len(data)/2))
	}
	// A value that does not get smaller (a small one: the header is the value's own) is kept as it is,
	// unless it would then read as compressed. The codecs write neither header; this keeps any value whole.
	if compressed != nil && (len(compressed) < len(data) || bytes.HasPrefix(data, s2Magic) || bytes.HasPrefix(data, zstdMagic)) {
		data = compressed
	}
	return t.inner.TransformToStorage(ctx, data, dataCtx)
}

func compressS2(data []byte) []byte {
	out := make([]byte, s2Header, s2Header+s2.MaxEncodedLen(len(data)))
	copy(out, s2Magic)
	out[4] = newest
	binary.LittleEndian.PutUint32(out[5:], crc32.Checksum(data, castagnoli))
	block := dictionaries[newest].Encode(out[s2Header:cap(out)], data)
	return out[:s2Header+len(block)]
}

func (t transformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	data, stale, err := t.inner.TransformFromStorage(ctx, data, dataCtx)
	switch {
	case err != nil:
		return data, stale, err
	case bytes.HasPrefix(data, s2Magic):
		data, err = decompressS2(data)
		return data, stale, err
	case bytes.HasPrefix(data, zstdMagic):
		decompressed, err := decoder.DecodeAll(data, make([]byte, 0, 3*len(data)))
		if err != nil {
			return nil, false, fmt.Errorf("decompressing a value stored with zstd: %w", err)
		}
		return decompressed, stale, nil
	}
	return data, stale, nil
}

func decompressS2(data []byte) ([]byte, error) {
	if len(data) < s2Header {
		return nil, fmt.Errorf("a value stored with S2 is %d bytes, shorter than its header", len(data))
	}
	d, ok := dictionaries[data[4]]
	if !ok {
		return nil, fmt.Errorf("a value stored with S2 names dictionary %d, which this hcp-apiserver does not have (it has 1 to %d): a newer server wrote it", data[4], newest)
	}
	block := data[s2Header:]
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("a value stored with S2 is corrupt: %w", err)
	}
	if n > maxDecompressed {
		return nil, fmt.Errorf("a value stored with S2 is corrupt: it claims to hold %d bytes, more than any object", n)
	}
	decompressed, err := d.Decode(make([]byte, n), block)
	if err != nil {
		return nil, fmt.Errorf("decompressing a value stored with S2: %w", err)
	}
	if crc32.Checksum(decompressed, castagnoli) != binary.LittleEndian.Uint32(data[5:]) {
		return nil, fmt.Errorf("a value stored with S2 is corrupt: its checksum does not match what it decompresses to")
	}
	return decompressed, nil
}
