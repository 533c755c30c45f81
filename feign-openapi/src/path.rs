//! Paths compared whatever their variables are named.

/// `/orders/{}` for `/orders/{id}`.
pub(crate) fn unnamed_vars(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_var = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_var = true;
                out.push_str("{}");
            }
            '}' => in_var = false,
            _ if in_var => {}
            _ => out.push(c),
        }
    }
    out
}
