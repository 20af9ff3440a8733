package generic

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// TableConvertor prints objects of type T as kubectl shows them: one row per object,
// Name, the Columns, Age, then the WideColumns that only -o wide shows.
type TableConvertor[T runtime.Object] struct {
	Columns     []metav1.TableColumnDefinition
	WideColumns []metav1.TableColumnDefinition
	// Cells returns the cells of Columns and of WideColumns.
	Cells func(T) (cells, wide []interface{})
}

var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: "Name of the object."}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: "Time since the object was created."}
)

// ConvertToTable implements rest.TableConvertor for one object or a list.
func (c TableConvertor[T]) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = append([]metav1.TableColumnDefinition{nameColumn}, c.Columns...)
		table.ColumnDefinitions = append(table.ColumnDefinitions, ageColumn)
		for _, wide := range c.WideColumns {
			wide.Priority = 1
			table.ColumnDefinitions = append(table.ColumnDefinitions, wide)
		}
	}
	addRow := func(obj runtime.Object) error {
		typed, ok := obj.(T)
		if !ok {
			return fmt.Errorf("cannot print %T in this table", obj)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		cells, wide := c.Cells(typed)
		row := append([]interface{}{m.GetName()}, cells...)
		row = append(row, Age(m.GetCreationTimestamp()))
		row = append(row, wide...)
		table.Rows = append(table.Rows, metav1.TableRow{Cells: row, Object: runtime.RawExtension{Object: obj}})
		return nil
	}
	if meta.IsListType(object) {
		if err := meta.EachListItem(object, addRow); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(object); err == nil {
			table.ResourceVersion = l.GetResourceVersion()
			table.Continue = l.GetContinue()
			table.RemainingItemCount = l.GetRemainingItemCount()
		}
		return table, nil
	}
	if err := addRow(object); err != nil {
		return nil, err
	}
	if m, err := meta.Accessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	return table, nil
}

// Age prints how long ago t was, as kubectl's AGE column does.
func Age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// OrNone prints an empty string as kubectl prints unset values.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
