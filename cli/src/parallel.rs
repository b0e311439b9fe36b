//! A fixed pool of worker threads over a list of independent jobs (`mrcgen synth`'s nextpnr
//! seeds, `mrcgen netsim`'s transport x seed runs): each worker takes the next index until
//! none is left, and the results come back in the items' order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f` over `items` on up to `jobs` threads, results in the items' order.
pub fn map_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else {
                    break;
                };
                let r = f(i, item);
                out.lock().expect("no panics while held")[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .expect("no panics while held")
        .into_iter()
        .map(|r| r.expect("every index ran"))
        .collect()
}

/// The default for `--jobs` (`synth`, `netsim`): the machine's cores.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_parallel_keeps_the_order_whatever_the_job_count() {
        let items: Vec<u32> = (0..7).collect();
        for jobs in [0, 1, 2, 3, 16] {
            let r = map_parallel(&items, jobs, |i, &x| {
                // later items finish first when there are several threads
                std::thread::sleep(std::time::Duration::from_millis(u64::from(7 - x)));
                (i, x * 10)
            });
            let want: Vec<(usize, u32)> = (0..7).map(|i| (i, i as u32 * 10)).collect();
            assert_eq!(r, want, "jobs = {jobs}");
        }
        assert!(map_parallel(&[] as &[u32], 2, |_, &x| x).is_empty());
    }
}
