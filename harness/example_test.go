package harness_test

import (
	"fmt"

	"github.com/onceproof/onceproof/harness"
)

// Keys are a function of the operation id alone: every retry of one operation
// carries the same key, and no key spells anything about the request.
func ExampleKeyFormat_Key() {
	fmt.Println(harness.KeyUUID.Key("op-1a2b3c4d-00000001"))
	fmt.Println(harness.KeyUUID.Key("op-1a2b3c4d-00000001"))
	fmt.Println(harness.KeyHex.Key("op-1a2b3c4d-00000002"))
	// Output:
	// 45460fff-546b-5539-be06-aa0b380cc455
	// 45460fff-546b-5539-be06-aa0b380cc455
	// 8ea0e3e17db79a15fe6bde50f1ef5b91
}

// A body template renders the same bytes for every retry of an operation;
// .Int and .Pick draw from the operation's seed.
func ExampleTemplate_Render() {
	body := harness.MustTemplate(`{"subject":"refund {{.Marker}}","amount":{{.Int 1 500}}}`)
	op := harness.Operation{ID: "op-1", Key: "k-1", Marker: "m-1", Seed: 3}
	first, _ := body.Render(op)
	retry, _ := body.Render(op)
	fmt.Println(first == retry)
	// Output:
	// true
}
