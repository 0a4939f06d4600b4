package registry

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// MarshalOver encodes r as YAML over prev, the file as it was: the edit is applied to prev's node
// tree, so that its comments (a "DADOS FICTÍCIOS" warning, a remark on a vehicle), the order of
// its keys and records and the style of its scalars stay as a person wrote them; only what r
// changed is rewritten. Records of licensees, vehicles and drivers are matched by id, other lists
// by position. Blank lines are not kept (the YAML library does not see them).
//
// The result is checked: it must decode to exactly r. When it does not, or prev is empty or not
// a YAML mapping, MarshalOver falls back to Marshal, which writes r in the package's layout with
// its own header.
func (r *Registry) MarshalOver(prev []byte) ([]byte, error) {
	want, err := r.Marshal()
	if err != nil {
		return nil, err
	}
	var old yaml.Node
	if err := yaml.Unmarshal(prev, &old); err != nil || old.Kind != yaml.DocumentNode ||
		len(old.Content) != 1 || old.Content[0].Kind != yaml.MappingNode {
		return want, nil
	}
	var cur yaml.Node
	if err := cur.Encode(r); err != nil {
		return nil, fmt.Errorf("registry: encode: %w", err)
	}
	old.Content[0] = mergeNode(old.Content[0], &cur)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&old); err != nil {
		return want, nil
	}
	if err := enc.Close(); err != nil {
		return want, nil
	}
	// The merged file must say exactly what r says: compared in the canonical layout.
	got, err := Parse(buf.Bytes(), "merged")
	if err != nil {
		return want, nil
	}
	canon, err := got.Marshal()
	if err != nil || !bytes.Equal(canon, want) {
		return want, nil
	}
	return buf.Bytes(), nil
}

// mergeNode returns cur, the new value, reusing old's nodes where they say the same, so that
// old's comments and styles survive.
func mergeNode(old, cur *yaml.Node) *yaml.Node {
	if old.Kind != cur.Kind || old.Kind == yaml.AliasNode || old.Anchor != "" {
		keepComments(cur, old)
		return cur
	}
	switch old.Kind {
	case yaml.ScalarNode:
		if old.Value == cur.Value && old.ShortTag() == cur.ShortTag() {
			return old
		}
		keepComments(cur, old)
		if old.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && cur.ShortTag() == "!!str" {
			cur.Style = old.Style
		}
		return cur
	case yaml.MappingNode:
		idx := make(map[string]int, len(cur.Content)/2)
		for i := 0; i+1 < len(cur.Content); i += 2 {
			idx[cur.Content[i].Value] = i
		}
		used := make(map[string]bool, len(idx))
		content := make([]*yaml.Node, 0, len(cur.Content))
		for i := 0; i+1 < len(old.Content); i += 2 {
			k := old.Content[i]
			j, ok := idx[k.Value]
			if !ok || used[k.Value] {
				continue // the key is gone
			}
			used[k.Value] = true
			content = append(content, k, mergeNode(old.Content[i+1], cur.Content[j+1]))
		}
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if !used[cur.Content[i].Value] {
				content = append(content, cur.Content[i], cur.Content[i+1])
			}
		}
		old.Content = content
		return old
	case yaml.SequenceNode:
		byID := make(map[string]*yaml.Node)
		for _, n := range old.Content {
			if id := idOf(n); id != "" {
				byID[id] = n
			}
		}
		content := make([]*yaml.Node, 0, len(cur.Content))
		for i, n := range cur.Content {
			switch id := idOf(n); {
			case id != "" && byID[id] != nil:
				content = append(content, mergeNode(byID[id], n))
				delete(byID, id)
			case id == "" && i < len(old.Content) && idOf(old.Content[i]) == "":
				content = append(content, mergeNode(old.Content[i], n))
			default:
				content = append(content, n)
			}
		}
		old.Content = content
		return old
	}
	keepComments(cur, old)
	return cur
}

// idOf is the value of a mapping's "id" key: how records are matched.
func idOf(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "id" && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// keepComments moves old's comments to the node that replaces it.
func keepComments(dst, old *yaml.Node) {
	if dst.HeadComment == "" {
		dst.HeadComment = old.HeadComment
	}
	if dst.LineComment == "" {
		dst.LineComment = old.LineComment
	}
	if dst.FootComment == "" {
		dst.FootComment = old.FootComment
	}
}
