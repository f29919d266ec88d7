//! `--shard K/N`: one of N CI runners takes every N-th unit of the plan, starting at the K-th; a
//! unit is a lab on one point of the matrix (its main cell and its mistake cells, which start from
//! the main cell's checkpoints). The plan is the same on every runner (labs in path order, then
//! versions, then mistakes), so every cell lands in exactly one shard.

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`, both counted from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s:?} is not a shard: write K/N with 1 ≤ K ≤ N, e.g. 1/2");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether the unit at `position` of the whole plan (from 0) belongs to this shard.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_position_in_exactly_one_shard() {
        for count in 1..6 {
            let shards: Vec<Shard> = (1..=count).map(|index| Shard { index, count }).collect();
            for position in 0..40 {
                assert_eq!(shards.iter().filter(|s| s.takes(position)).count(), 1);
            }
        }
    }

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!("2/3".parse(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/2", "3/2", "1/0", "1", "a/b", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
