//! Learner scripts as bash syntax trees (tree-sitter-bash): the byte ranges of statements,
//! pipeline stages, redirections, heredoc bodies and command arguments that mutation operators
//! rewrite. Parsing is error-tolerant; a script bash itself rejects is found by `bash -n`.

use tree_sitter::{Node, Parser, Tree};

/// Parses a script.
pub fn parse(script: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    parser.parse(script, None)
}

/// The node's children with a field name, or all named children.
pub fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Every node under `node` (itself included), depth first.
pub fn descendants<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut out = vec![node];
    let mut i = 0;
    while i < out.len() {
        let n = out[i];
        let mut cursor = n.walk();
        let kids: Vec<Node<'t>> = n.children(&mut cursor).collect();
        out.extend(kids);
        i += 1;
    }
    out
}

/// A command's program (its name as written) and its arguments (redirections left out).
pub fn command_args<'t, 's>(command: Node<'t>, src: &'s str) -> Option<(&'s str, Vec<Node<'t>>)> {
    let name = command.child_by_field_name("name")?;
    let args = named_children(command)
        .into_iter()
        .filter(|n| n.id() != name.id() && n.kind() != "file_redirect")
        .collect();
    Some((text(name, src), args))
}

/// The text of a node.
pub fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredocs_belong_to_their_statement() {
        let src = "cat > /root/b.yaml <<'EOF'\nkind: A\nEOF\necho done\n";
        let tree = parse(src).expect("parse");
        let top: Vec<&str> = named_children(tree.root_node())
            .into_iter()
            .map(|n| n.kind())
            .collect();
        assert_eq!(top, ["redirected_statement", "command"]);
        let body = descendants(tree.root_node())
            .into_iter()
            .find(|n| n.kind() == "heredoc_body")
            .expect("a heredoc body");
        assert_eq!(text(body, src), "kind: A\n");
    }
}
