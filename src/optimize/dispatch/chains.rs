//! Exception chains (`jeq #s1 → t1; jeq #s2 → t2; …; → X`): which runs of leaves one chain
//! decides, listed once per dispatch for both dynamic programs (the split table of
//! [`super::split`] and the bounded tables of [`super::bounded`]).

use super::*;

/// The exception chains of a dispatch's leaves, by first leaf (several may end at one leaf,
/// one per rest target), their exceptions kept in one buffer: a chain is listed for every
/// range it fits, and a vector each would be most of the time spent listing them.
#[derive(Default)]
pub(super) struct Chains {
    /// `by_start[i]`: the chains over `i..=last`; empty when the program takes no chains.
    /// One run of chains per rest target, each over `i..=i + 1`, `i..=i + 2`, … (a rest
    /// target's chains end at every leaf until one does not fit).
    pub(super) by_start: Vec<Vec<Chain>>,
    /// `first_run[i]`: how many of `by_start[i]` are the first rest target's.
    pub(super) first_run: Vec<usize>,
    /// Every chain's exceptions (leaves), each chain's a slice of it.
    pub(super) exceptions: Vec<u32>,
}

/// An exception chain over leaves `first..=last` (its first leaf is where [`Chains`] lists
/// it): a `jeq` for each exception, and every other value of the range goes to `rest`.
#[derive(Clone, Debug)]
pub(super) struct Chain {
    pub(super) last: usize,
    pub(super) cost: Cost,
    /// Where its exceptions are in [`Chains::exceptions`], in test order: heaviest first.
    pub(super) order: std::ops::Range<usize>,
    /// The target of every leaf of the range that is not an exception.
    pub(super) rest: NodeId,
}

impl Chain {
    pub(super) fn tests(&self) -> usize {
        self.order.len()
    }
}

impl Chains {
    /// Whether the program takes no chains (none were listed).
    pub(super) fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }

    /// The chains over `i..=j`, with their places among those starting at `i`.
    pub(super) fn over(&self, i: usize, j: usize) -> impl Iterator<Item = (u32, &Chain)> {
        let from_i = self.by_start.get(i).map_or(&[][..], |c| &c[..]);
        let first = self.first_run.get(i).copied().unwrap_or(0);
        // In each run, the chain over `i..=j` is the (j - i)th (the first run may be empty).
        let at = j.wrapping_sub(i).wrapping_sub(1);
        [Some(at), (first > 0).then(|| first.wrapping_add(at))]
            .into_iter()
            .flatten()
            .filter(move |&k| k < from_i.len() && from_i[k].last == j)
            .map(move |k| (k as u32, &from_i[k]))
    }

    /// The cheapest chain over `i..=j`.
    pub(super) fn cheapest(&self, i: usize, j: usize) -> Option<&Chain> {
        self.over(i, j)
            .map(|(_, c)| c)
            .min_by(|x, y| x.cost.cmp_total(&y.cost))
    }

    /// The exceptions of `chain`, in test order.
    pub(super) fn order(&self, chain: &Chain) -> &[u32] {
        &self.exceptions[chain.order.clone()]
    }

    /// The tree `chain` is, over `leaves`.
    pub(super) fn tree(&self, chain: &Chain, leaves: &[Leaf]) -> Tree {
        Tree::Chain {
            tests: self
                .order(chain)
                .iter()
                .map(|&e| (leaves[e as usize].lo, leaves[e as usize].target))
                .collect(),
            rest: Box::new(Tree::Leaf(chain.rest)),
        }
    }

    /// The longest path of `chain`: the last exception's test and body, or all tests and
    /// the rest's body.
    pub(super) fn longest_path(
        &self,
        chain: &Chain,
        leaves: &[Leaf],
        len: &dyn Fn(NodeId) -> usize,
    ) -> usize {
        let exits = self.order(chain).iter().enumerate();
        exits
            .map(|(p, &e)| p + 1 + len(leaves[e as usize].target))
            .max()
            .unwrap_or(0)
            .max(chain.tests() + len(chain.rest))
    }
}

/// Whether some range of `leaves` can be an exception chain: whether one leaf (of two or
/// more) is a single value.
pub(super) fn may_chain_somewhere(leaves: &[Leaf]) -> bool {
    leaves.len() > 1 && leaves.iter().any(|l| l.lo == l.hi)
}

/// For each start `i`, the exception chains over `i..=j`: every leaf of the range either has
/// the chain's rest target `X` or is a single value (an exception, one `jeq`), with at most
/// `max_exceptions` exceptions ([`MAX_EXCEPTIONS`], or [`MAX_SIZE_EXCEPTIONS`] with
/// `--favor size`); their cost as a chain, and the exceptions in test order (heaviest first).
/// Each chain costs `test_price` per exception on top of its weighted depths.
///
/// `X` is tried as the first leaf's target and as the first wider leaf's (a leaf of more than
/// one value is never an exception, so a chain holding one has its target as `X`). For
/// aarch64's `read` (63) and `write` (64) with different bodies between ranges that are
/// allowed, `[..62] 63 64 [65..]` is one chain of two `jeq`s where a strict `X s X s X`
/// alternation broke at 64 and took a split more.
pub(super) fn exception_chains(leaves: &[Leaf], max_exceptions: usize, test_price: Cost) -> Chains {
    let m = leaves.len();
    let single = |k: usize| leaves[k].lo == leaves[k].hi;
    let mut out = Chains {
        by_start: vec![Vec::new(); m],
        first_run: vec![0; m],
        exceptions: Vec::new(),
    };
    // `wider[i]`: the target of the first leaf of more than one value from `i` on.
    let mut wider: Vec<Option<NodeId>> = vec![None; m + 1];
    for k in (0..m).rev() {
        wider[k] = if single(k) {
            wider[k + 1]
        } else {
            Some(leaves[k].target)
        };
    }
    // The exceptions so far in test order, heaviest first (ties: lower values first).
    let mut order: Vec<u32> = Vec::new();
    for i in 0..m {
        let mut rests = [Some(leaves[i].target), None];
        if let Some(x) = wider[i].filter(|&x| x != leaves[i].target) {
            rests[1] = Some(x);
        }
        for (run, x) in rests.into_iter().enumerate() {
            if run == 1 {
                out.first_run[i] = out.by_start[i].len();
            }
            let Some(x) = x else { continue };
            order.clear();
            let mut x_weight = Cost::ZERO;
            for j in i..m {
                if leaves[j].target == x {
                    x_weight = x_weight + leaves[j].weight;
                } else if single(j) && order.len() < max_exceptions {
                    let at = order.partition_point(|&e| {
                        leaves[e as usize].weight.cmp_total(&leaves[j].weight) != Ordering::Less
                    });
                    order.insert(at, j as u32);
                } else {
                    break;
                }
                // Only a range of two leaves or more with something to test is a chain.
                if order.is_empty() || j == i {
                    continue;
                }
                let mut c = (x_weight + test_price) * order.len() as f64;
                for (p, &e) in order.iter().enumerate() {
                    c = c + leaves[e as usize].weight * (p as f64 + 1.0);
                }
                let start = out.exceptions.len();
                out.exceptions.extend_from_slice(&order);
                out.by_start[i].push(Chain {
                    last: j,
                    cost: c,
                    order: start..out.exceptions.len(),
                    rest: x,
                });
            }
        }
    }
    out
}
