//! Tarjan's strongly connected components: the sets of files that reach each other.

/// The components of more than one node of the graph of `nodes` nodes and these edges, each
/// sorted, in the order Tarjan's algorithm closes them.
pub(crate) fn loops(
    nodes: usize,
    edges: impl IntoIterator<Item = (usize, usize)>,
) -> Vec<Vec<usize>> {
    let mut successors = vec![Vec::new(); nodes];
    for (from, to) in edges {
        successors[from].push(to);
    }
    let mut tarjan = Tarjan {
        successors,
        index: vec![None; nodes],
        low: vec![0; nodes],
        stack: Vec::new(),
        on_stack: vec![false; nodes],
        next: 0,
        components: Vec::new(),
    };
    for node in 0..nodes {
        if tarjan.index[node].is_none() {
            tarjan.visit(node);
        }
    }
    tarjan.components
}

struct Tarjan {
    successors: Vec<Vec<usize>>,
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    stack: Vec<usize>,
    on_stack: Vec<bool>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan {
    // Recursive: a crate's module tree is a few hundred files deep at most.
    fn visit(&mut self, node: usize) {
        self.index[node] = Some(self.next);
        self.low[node] = self.next;
        self.next += 1;
        self.stack.push(node);
        self.on_stack[node] = true;
        for i in 0..self.successors[node].len() {
            let next = self.successors[node][i];
            match self.index[next] {
                None => {
                    self.visit(next);
                    self.low[node] = self.low[node].min(self.low[next]);
                }
                Some(index) if self.on_stack[next] => self.low[node] = self.low[node].min(index),
                Some(_) => {}
            }
        }
        if Some(self.low[node]) == self.index[node] {
            let mut component = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack[member] = false;
                component.push(member);
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                self.components.push(component);
            }
        }
    }
}
