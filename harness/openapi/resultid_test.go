package openapi

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResultIDFromStructure: on documents modelled on real APIs (written
// for this test: a sid-named telephony API, a form-encoded payments API,
// number-addressed issues, enveloped commerce answers, .json paths, a
// Location with examples, a response link), the result id comes from the
// document's structure before names.
func TestResultIDFromStructure(t *testing.T) {
	want := map[string]map[string]string{
		"twilio.yaml":    {"CreateMessage": "/sid", "CreateCall": "/sid", "CreateVerifyService": "/sid"},
		"stripe.yaml":    {"PostCustomers": "/id", "PostPaymentIntents": "/id", "PostRefunds": "/id"},
		"github.yaml":    {"issues-create": "/number", "pulls-create": "/number", "issues-create-comment": "/id"},
		"square.yaml":    {"CreatePayment": "/payment/id", "CreateCustomer": "/customer/id"},
		"shop.yaml":      {"createProduct": "/product/id"},
		"ticketing.yaml": {"CreateTicket": "/ticket/id", "createOrder": "/reference"},
		"paypal.yaml":    {"orders.create": "/id"},
	}
	total, right, byName := 0, 0, 0
	for file, ops := range want {
		t.Run(file, func(t *testing.T) {
			d, err := Load(context.Background(), filepath.Join("testdata", "resultid", file), Options{})
			require.NoError(t, err)
			seen := 0
			for _, op := range d.Operations {
				w, ok := ops[op.Name]
				if !ok {
					continue
				}
				seen++
				total++
				got, how := d.ResultID(op)
				if assert.Equal(t, w, got, "%s %s %s: %s", op.Name, op.Method, op.Path, how) {
					right++
				}
				assert.NotEmpty(t, how)
				if named, _ := namedResultID(op); named == w {
					byName++
				}
			}
			require.Equal(t, len(ops), seen, "every operation the table names is in %s", file)
			// The drafted spec carries it.
			draft, err := d.Draft(nil)
			require.NoError(t, err)
			for _, td := range draft.Tools {
				if w, ok := ops[td.Name]; ok {
					assert.Equal(t, w, td.ResultID, td.Name)
				}
			}
		})
	}
	t.Logf("result ids right: %d of %d from the structure; %d of %d by names alone", right, total, byName, total)
	assert.Less(t, byName, total, "the documents hold ids that names alone miss (sid, number, envelopes)")
}

func TestItemOf(t *testing.T) {
	for _, tc := range []struct {
		item, coll, param, noun string
		ok                      bool
	}{
		{"/v1/customers/{customer}", "/v1/customers", "customer", "customer", true},
		{"/A/{AccountSid}/Messages/{Sid}.json", "/A/{AccountSid}/Messages.json", "Sid", "message", true},
		{"/A/{a}/Messages/{Sid}.json", "/A/{AccountSid}/Messages.json", "Sid", "message", true},
		{"/r/{o}/{r}/issues/{issue_number}", "/r/{o}/{r}/issues", "issue_number", "issue", true},
		{"/v1/categories/{id}", "/v1/categories", "id", "category", true},
		{"/v1/addresses/{id}", "/v1/addresses", "id", "address", true},
		{"/v1/customers/{customer}", "/v1/charges", "", "", false},
		{"/v1/customers/{customer}.json", "/v1/customers", "", "", false},
		{"/v1/customers/search", "/v1/customers", "", "", false},
	} {
		param, noun, ok := itemOf(tc.item, tc.coll)
		assert.Equal(t, tc.ok, ok, "%s of %s", tc.item, tc.coll)
		assert.Equal(t, tc.param, param, tc.item)
		assert.Equal(t, tc.noun, noun, tc.item)
	}
}
