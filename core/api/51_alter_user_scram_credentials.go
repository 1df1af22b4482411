package api

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/auth"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(51, 0, 0, (*Broker).handleAlterUserScramCredentials) }

// handleAlterUserScramCredentials stores credentials derived from the
// client's salted passwords (the broker never sees a password) and deletes
// credentials. Results are per user, as in Kafka.
func (b *Broker) handleAlterUserScramCredentials(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	results := map[string]*scramOutcome{}
	var order []string
	set := func(user string, code int16, msg string) {
		o, ok := results[user]
		if !ok {
			o = &scramOutcome{}
			results[user] = o
			order = append(order, user)
		}
		if o.code == 0 {
			o.code, o.msg = code, msg
		}
	}
	allowed := b.authorizeCluster(r, sdkauth.OpAlter)
	type key struct {
		user string
		mech int8
	}
	seen := map[key]bool{}
	var dels []controller.ScramKey
	var delUsers []string
	var ups []controller.ScramCredential
	var upUsers []string
	check := func(name string, mech int8) bool {
		switch {
		case !allowed:
			set(name, kerr.ClusterAuthorizationFailed.Code, "")
		case name == "":
			set(name, kerr.UnacceptableCredential.Code, "Username must not be empty")
		case !auth.ScramMechanism(mech).Valid():
			set(name, kerr.UnsupportedSaslMechanism.Code, fmt.Sprintf("Unknown SCRAM mechanism %d", mech))
		case seen[key{name, mech}]:
			set(name, kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request")
		default:
			seen[key{name, mech}] = true
			return true
		}
		return false
	}
	for _, d := range req.Deletions {
		if check(d.Name, d.Mechanism) {
			dels = append(dels, controller.ScramKey{User: d.Name, Mechanism: d.Mechanism})
			delUsers = append(delUsers, d.Name)
		}
	}
	for _, u := range req.Upsertions {
		if !check(u.Name, u.Mechanism) {
			continue
		}
		cred, err := auth.NewScramCredential(auth.ScramMechanism(u.Mechanism), u.SaltedPassword, u.Salt, u.Iterations)
		if err != nil {
			set(u.Name, kerr.UnacceptableCredential.Code, err.Error())
			continue
		}
		ups = append(ups, controller.ScramCredential{User: u.Name, Mechanism: u.Mechanism, Salt: cred.Salt,
			StoredKey: cred.StoredKey, ServerKey: cred.ServerKey, Iterations: cred.Iterations})
		upUsers = append(upUsers, u.Name)
	}
	// A user with any invalid part changes nothing.
	dels, delUsers = keepValid(dels, delUsers, results)
	ups, upUsers = keepValid(ups, upUsers, results)
	ctx, cancel := b.adminCtx(r, 0)
	defer cancel()
	delErrs, upErrs := b.Controller.AlterScramCredentials(ctx, dels, ups)
	for i, err := range delErrs {
		if errors.Is(err, controller.ErrNoCredential) {
			set(delUsers[i], kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist")
		} else if err != nil {
			set(delUsers[i], errCode(err), err.Error())
		} else {
			set(delUsers[i], 0, "")
		}
	}
	for i, err := range upErrs {
		if err != nil {
			set(upUsers[i], errCode(err), err.Error())
		} else {
			set(upUsers[i], 0, "")
		}
	}
	for _, u := range order {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User, res.ErrorCode = u, results[u].code
		if results[u].msg != "" {
			res.ErrorMessage = kmsg.StringPtr(results[u].msg)
		}
		resp.Results = append(resp.Results, res)
	}
	return protocol.Reply{Resp: resp}
}

type scramOutcome struct {
	code int16
	msg  string
}

// keepValid drops the items of users that already have an error.
func keepValid[T any](items []T, users []string, results map[string]*scramOutcome) ([]T, []string) {
	var outItems []T
	var outUsers []string
	for i, u := range users {
		if o, ok := results[u]; ok && o.code != 0 {
			continue
		}
		outItems = append(outItems, items[i])
		outUsers = append(outUsers, u)
	}
	return outItems, outUsers
}
