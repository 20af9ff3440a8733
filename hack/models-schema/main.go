// Command models-schema prints the OpenAPI v2 definitions of the generated
// openapi package. update-codegen.sh feeds them to applyconfiguration-gen so
// the apply configurations know each list's merge strategy.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/aro-hcp/hcp-apiserver/pkg/generated/openapi"
)

func main() {
	if err := printSchema(); err != nil {
		fmt.Fprintf(os.Stderr, "models-schema: %v\n", err)
		os.Exit(1)
	}
}

func printSchema() error {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	defs := openapi.GetOpenAPIDefinitions(ref)
	schemas := make(map[string]spec.Schema, len(defs))
	for name, def := range defs {
		// A definition may carry a separate v2 form (for types whose v3 form v2 cannot express).
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			schemas[name] = v2
			continue
		}
		schemas[name] = def.Schema
	}
	data, err := json.Marshal(&spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "hcp-apiserver", Version: "unversioned"}},
		Definitions: schemas,
	}})
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(data)
	return err
}
