//! Traffic patterns: the flows of a run, from a pattern, a host count and a seed.
//!
//! ```text
//!  permutation      every host sends one flow to a distinct host (a random derangement)
//!  incast           N senders -> one receiver, plus a victim flow into a neighbour of the
//!                   receiver (same first switch), started together
//!  all_to_all       every host to every other host
//!  ring_allreduce   2(n-1) steps around a ring; step s+1 of host i starts when host i-1's
//!                   step s has arrived (a data dependency, FlowSpec::after)
//! ```

use super::endpoint::FlowSpec;
use super::packet::HostId;
use super::Ps;
use crate::rng::SplitMix64;

/// A pattern with its sizes.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    Permutation {
        flow_bytes: u64,
    },
    Incast {
        senders: u32,
        flow_bytes: u64,
        /// Bytes of the victim flow (0: no victim).
        victim_bytes: u64,
    },
    AllToAll {
        flow_bytes: u64,
    },
    RingAllReduce {
        /// The whole buffer each host reduces; every step moves `buffer_bytes / n`.
        buffer_bytes: u64,
    },
}

/// Roles in an incast, so reports can single the victim out.
pub const INCAST_RECEIVER: HostId = 0;

fn derangement(n: u32, rng: &mut SplitMix64) -> Vec<u32> {
    // Sattolo's algorithm: a uniformly random cyclic permutation, so no host sends to itself.
    let mut p: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        p.swap(i, j);
    }
    p
}

/// The flows of `pattern` over `hosts` hosts. `host_group` is how many hosts share a first
/// switch (the incast victim is placed in the receiver's group); `jitter` spreads start times
/// uniformly over [0, jitter).
pub fn flows(
    pattern: &Pattern,
    hosts: u32,
    host_group: u32,
    jitter: Ps,
    seed: u64,
) -> Result<Vec<FlowSpec>, String> {
    let mut rng = SplitMix64::new(seed ^ 0x7AFF_1C00);
    let mut out: Vec<FlowSpec> = Vec::new();
    let add = |out: &mut Vec<FlowSpec>, src: u32, dst: u32, bytes: u64, rng: &mut SplitMix64| {
        let start = if jitter > 0 {
            rng.next_u64() % jitter
        } else {
            0
        };
        let id = out.len() as u32;
        out.push(FlowSpec {
            id,
            src,
            dst,
            bytes,
            start,
            seed: seed.wrapping_mul(0x9E37_79B9).wrapping_add(id as u64 + 1),
            after: None,
        });
    };
    if hosts < 2 {
        return Err(format!("{hosts} hosts: traffic needs at least 2"));
    }
    match *pattern {
        Pattern::Permutation { flow_bytes } => {
            let p = derangement(hosts, &mut rng);
            for (s, &d) in p.iter().enumerate() {
                add(&mut out, s as u32, d, flow_bytes, &mut rng);
            }
        }
        Pattern::Incast {
            senders,
            flow_bytes,
            victim_bytes,
        } => {
            // Receiver 0; the victim receiver is its neighbour on the same first switch, the
            // senders come from outside that switch so the incast crosses the fabric.
            let victim_dst = 1;
            if host_group < 2 {
                return Err("incast with a victim needs 2 hosts per first switch".into());
            }
            let outside: Vec<u32> = (host_group..hosts).collect();
            if outside.len() < senders as usize + (victim_bytes > 0) as usize {
                return Err(format!(
                    "incast of {senders} senders (+ victim) needs {} hosts outside the receiver's switch; the topology has {}",
                    senders + 1,
                    outside.len()
                ));
            }
            // Spread senders over the other switches, deterministically.
            let stride = (outside.len() / (senders as usize + 1)).max(1);
            for i in 0..senders as usize {
                add(
                    &mut out,
                    outside[i * stride],
                    INCAST_RECEIVER,
                    flow_bytes,
                    &mut rng,
                );
            }
            if victim_bytes > 0 {
                let v = outside[(senders as usize * stride + stride / 2).min(outside.len() - 1)];
                add(&mut out, v, victim_dst, victim_bytes, &mut rng);
            }
        }
        Pattern::AllToAll { flow_bytes } => {
            if hosts > 256 {
                return Err(format!(
                    "all_to_all over {hosts} hosts is {} flows; at most 256 hosts",
                    hosts as u64 * (hosts as u64 - 1)
                ));
            }
            for s in 0..hosts {
                for k in 1..hosts {
                    add(&mut out, s, (s + k) % hosts, flow_bytes, &mut rng);
                }
            }
        }
        Pattern::RingAllReduce { buffer_bytes } => {
            let n = hosts as u64;
            let chunk = (buffer_bytes / n).max(1);
            let steps = 2 * (n - 1);
            // Flow id of (step, host) = step * n + host. Step s of host i needs step s - 1 of
            // host i - 1 to have arrived (reduce-scatter, then all-gather).
            for s in 0..steps {
                for i in 0..n {
                    add(&mut out, i as u32, ((i + 1) % n) as u32, chunk, &mut rng);
                    if s > 0 {
                        let prev = ((s - 1) * n + (i + n - 1) % n) as u32;
                        out.last_mut().unwrap().after = Some(prev);
                        out.last_mut().unwrap().start = 0;
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_derangement_and_seeded() {
        let f = flows(&Pattern::Permutation { flow_bytes: 10 }, 128, 8, 0, 3).unwrap();
        let mut dsts: Vec<u32> = f.iter().map(|x| x.dst).collect();
        assert!(f.iter().all(|x| x.src != x.dst));
        dsts.sort();
        assert_eq!(dsts, (0..128).collect::<Vec<_>>());
        assert_eq!(
            f,
            flows(&Pattern::Permutation { flow_bytes: 10 }, 128, 8, 0, 3).unwrap()
        );
        assert_ne!(
            f,
            flows(&Pattern::Permutation { flow_bytes: 10 }, 128, 8, 0, 4).unwrap()
        );
    }

    #[test]
    fn incast_senders_are_outside_the_receivers_switch_and_the_victim_shares_it() {
        let p = Pattern::Incast {
            senders: 7,
            flow_bytes: 100,
            victim_bytes: 1000,
        };
        let f = flows(&p, 128, 8, 0, 1).unwrap();
        assert_eq!(f.len(), 8);
        assert!(f[..7].iter().all(|x| x.dst == 0 && x.src >= 8));
        assert_eq!((f[7].dst, f[7].bytes), (1, 1000));
        let mut srcs: Vec<u32> = f.iter().map(|x| x.src).collect();
        srcs.dedup();
        assert_eq!(srcs.len(), 8);
        assert!(flows(&p, 12, 8, 0, 1).unwrap_err().contains("needs"));
    }

    #[test]
    fn ring_allreduce_chains_each_step_on_the_previous_hosts_step() {
        let f = flows(&Pattern::RingAllReduce { buffer_bytes: 4000 }, 4, 2, 0, 1).unwrap();
        assert_eq!(f.len(), 2 * 3 * 4);
        assert!(f
            .iter()
            .all(|x| x.bytes == 1000 && x.dst == (x.src + 1) % 4));
        assert_eq!(f[4].after, Some(3)); // step 1 of host 0 waits for step 0 of host 3
        assert_eq!(f[5].after, Some(0));
        assert!(f[..4].iter().all(|x| x.after.is_none()));
    }

    #[test]
    fn all_to_all_covers_every_ordered_pair() {
        let f = flows(&Pattern::AllToAll { flow_bytes: 1 }, 5, 1, 100, 1).unwrap();
        assert_eq!(f.len(), 20);
        assert!(f.iter().all(|x| x.start < 100));
    }
}
