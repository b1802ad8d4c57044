//! Opening inputs: files, folders, globs and stdin; sniffing compression; whole-line chunks.
//!
//! Plain regular files are memory-mapped (an `unsafe` call, as is dropping the pages of a
//! worked-on piece, see [`release`]), so records can borrow the file's bytes; if mapping
//! fails (a pipe, a special file, a filesystem without mmap) the file is read into memory.
//! gzip and zstd are recognised by their magic bytes — never by the file name — and streamed
//! through a decoder on a reader thread, cut into chunks that end on a newline. Mapped and
//! read files are cut by a [`ChunkGrid`], each chunk by the worker that takes it.

mod chunks;
mod error;
mod expand;
mod input;
mod open;
mod pipe;

pub use chunks::{keep_spare, release, ChunkGrid, Filled, StreamChunks, WRAPPED_ROWS};
pub use error::{Shrank, SourceError};
pub use expand::{expand, Expanded, Unread};
pub use input::{instance_names, Input, Named};
pub use open::{AtOpen, Compression, Data, FileChange, MadeLines, Source};
pub use pipe::set_pipe_timeout;

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io;

    /// What happened to a file between its opening and the end of its reading: appended to,
    /// truncated, renamed over, deleted; nothing when it did not change.
    #[test]
    fn changes_after_opening() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("tokstat-change-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("gpu0.log");
        std::fs::write(&p, "a\nb\n").unwrap();
        let opened = || {
            Source::open(&Input::Path(p.clone()))
                .unwrap()
                .at_open
                .unwrap()
        };
        let o = opened();
        assert_eq!(o.len, 4);
        assert_eq!(o.change(&p), None);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"c\n")
            .unwrap();
        assert_eq!(o.change(&p), Some(FileChange::Grew { len: 6 }));
        let o = opened();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(1)
            .unwrap();
        assert_eq!(o.change(&p), Some(FileChange::Shrank { len: 1 }));
        let o = opened();
        let new = dir.join("new.log");
        std::fs::write(&new, "x\n").unwrap();
        std::fs::rename(&new, &p).unwrap();
        assert_eq!(o.change(&p), Some(FileChange::Replaced));
        std::fs::remove_file(&p).unwrap();
        assert_eq!(o.change(&p), Some(FileChange::Deleted));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Folders are walked in name order, hidden names left out, links followed; a link back
    /// to a folder above it is noted once, naming the loop, and the files are still read (it
    /// used to recurse until the path was too long, then to fail the whole command).
    #[cfg(unix)]
    #[test]
    fn folders_walk_in_order_and_loops_are_noted_once() {
        let tmp = std::env::temp_dir().join(format!("tokstat-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("b/inner")).unwrap();
        std::fs::create_dir_all(tmp.join(".hidden")).unwrap();
        for f in [
            "a.log",
            "b/inner/c.log",
            "b/z.log",
            ".hidden/x.log",
            ".dot.log",
        ] {
            std::fs::write(tmp.join(f), "x\n").unwrap();
        }
        let root = tmp.display().to_string();
        let names = |e: &Expanded| -> Vec<String> {
            e.inputs
                .iter()
                .map(|i| i.display()[root.len() + 1..].to_string())
                .collect()
        };
        let got = expand(std::slice::from_ref(&root)).unwrap();
        assert_eq!(names(&got), ["a.log", "b/inner/c.log", "b/z.log"]);
        assert!(got.unread.is_empty());
        std::os::unix::fs::symlink(&tmp, tmp.join("b/inner/up")).unwrap();
        let got = expand(std::slice::from_ref(&root)).unwrap();
        assert_eq!(names(&got), ["a.log", "b/inner/c.log", "b/z.log"]);
        assert_eq!(
            got.unread,
            [Unread {
                path: tmp.join("b/inner/up").display().to_string(),
                why: format!("a link back to {}, not followed again", tmp.display()),
                lost: false,
            }]
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    /// Bytes in memory open as the file they are named after would: shared where plain
    /// (never copied), decompressed where gzip or zstd, cut at a limit, named and stemmed
    /// by their name.
    #[test]
    fn bytes_in_memory_open_as_their_file() {
        use std::io::Read;
        let text = b"line one\nline two\n".to_vec();
        let input = Input::bytes("nodeA/gpu0.log.1", text.clone());
        assert_eq!(
            (input.display(), input.stem()),
            ("nodeA/gpu0.log.1".into(), "gpu0".into())
        );
        let names = instance_names(&[input.clone(), Input::bytes("nodeB/gpu0.log", vec![])]);
        assert_eq!(names, ["nodeA/gpu0", "nodeB/gpu0"]);
        let mut src = Source::open(&input).unwrap();
        assert_eq!(src.head().unwrap(), text);
        match (&src.data, &input) {
            (Data::Shared(v), Input::Bytes(named)) => {
                assert!(std::sync::Arc::ptr_eq(v, &named.bytes))
            }
            _ => panic!("not shared"),
        }
        assert_eq!(
            Source::open_upto(&input, Some(9))
                .unwrap()
                .data
                .read_all()
                .unwrap(),
            b"line one\n"
        );
        let z = zstd::encode_all(&text[..], 3).unwrap();
        let src = Source::open(&Input::bytes("a.log.zst", z)).unwrap();
        assert_eq!(src.compression, Compression::Zstd);
        let mut back = Vec::new();
        let Data::Stream(mut r) = src.data else {
            panic!("not a stream")
        };
        r.read_to_end(&mut back).unwrap();
        assert_eq!(back, text);
    }

    #[test]
    fn chunks_end_on_newlines() {
        let data = b"aa\nbbbb\ncc\nd";
        let g = ChunkGrid::new(data, 3);
        let c: Vec<_> = (0..g.len()).map(|k| g.cell(k)).collect();
        assert_eq!(c, [&b"aa\n"[..], b"bbbb\n", b"cc\n", b"d"]);
        // a cell that no line starts in is empty
        let g = ChunkGrid::new(b"aaaaaaa\nb", 2);
        let c: Vec<_> = (0..g.len()).map(|k| g.cell(k)).collect();
        assert_eq!(c, [&b"aaaaaaa\n"[..], b"", b"", b"", b"b"]);
        let s: Vec<_> = StreamChunks::new(Box::new(&data[..]), 4)
            .map(|c| c.unwrap().bytes().to_vec())
            .collect();
        assert_eq!(s.concat(), data);
        assert!(s[..s.len() - 1].iter().all(|c| c.ends_with(b"\n")));
    }

    proptest::proptest! {
        /// Cells cover the data in order, each holds exactly the lines that start in it, and
        /// all but the last end on a newline.
        #[test]
        fn cells_hold_the_lines_that_start_in_them(
            lines in proptest::collection::vec(0usize..40, 0..30),
            last_newline in proptest::bool::ANY,
            size in 1usize..50,
        ) {
            let mut data = Vec::new();
            let mut starts = Vec::new();
            for (k, &len) in lines.iter().enumerate() {
                starts.push(data.len());
                data.extend(std::iter::repeat_n(b'a' + (k % 26) as u8, len));
                if k + 1 < lines.len() || last_newline {
                    data.push(b'\n');
                }
            }
            let g = ChunkGrid::new(&data, size);
            let mut at = 0;
            for k in 0..g.len() {
                let c = g.cell(k);
                // an empty cell has no place (the scan leaves it out)
                if !c.is_empty() {
                    proptest::prop_assert_eq!(c.as_ptr() as usize - data.as_ptr() as usize, at);
                }
                let cell = k * size..(k + 1) * size;
                let inside: Vec<usize> = starts
                    .iter()
                    .copied()
                    .filter(|s| cell.contains(s) && *s < data.len())
                    .collect();
                let found: Vec<usize> = std::iter::once(at)
                    .chain(c.iter().enumerate().filter(|x| *x.1 == b'\n').map(|x| at + x.0 + 1))
                    .filter(|&s| s < at + c.len())
                    .collect();
                proptest::prop_assert_eq!(if c.is_empty() { vec![] } else { found }, inside);
                at += c.len();
            }
            proptest::prop_assert_eq!(at, data.len());
        }
    }

    proptest::proptest! {
        /// Over a log, cells cover the data in order, each starts on a line start, and no
        /// cell but the first starts on a row that opens no line unless the
        /// [`chunks::WRAPPED_ROWS`] rows before it open none either; a stream's log chunks
        /// keep the same rule, cut after `half` of the target.
        #[test]
        fn log_cells_keep_wrapped_rows_together(
            rows in proptest::collection::vec((proptest::bool::ANY, 0usize..30), 0..60),
            size in 1usize..80,
        ) {
            let mut data = Vec::new();
            let mut starts = Vec::new();
            for &(opens, len) in &rows {
                starts.push(data.len());
                data.extend_from_slice(if opens { b"[2026] " } else { b"wrapped " });
                data.extend(std::iter::repeat_n(b'x', len));
                data.push(b'\n');
            }
            let opening = |at: usize| data[at..].starts_with(b"[");
            let ok_edge = |at: usize| -> bool {
                if at == 0 || at >= data.len() || opening(at) {
                    return true;
                }
                let k = starts.iter().position(|&s| s == at).unwrap();
                k >= chunks::WRAPPED_ROWS
                    && (k - chunks::WRAPPED_ROWS..k).all(|j| !opening(starts[j]))
            };
            let g = ChunkGrid::logs(&data, size);
            let mut at = 0;
            for k in 0..g.len() {
                let c = g.cell(k);
                if !c.is_empty() {
                    proptest::prop_assert_eq!(c.as_ptr() as usize - data.as_ptr() as usize, at);
                    proptest::prop_assert!(starts.contains(&at) || at == 0);
                    proptest::prop_assert!(ok_edge(at), "edge at {} of {:?}", at, String::from_utf8_lossy(&data));
                }
                at += c.len();
            }
            proptest::prop_assert_eq!(at, data.len());
            let s: Vec<Vec<u8>> = StreamChunks::new(Box::new(io::Cursor::new(data.clone())), size)
                .logs()
                .map(|c| c.unwrap().bytes().to_vec())
                .collect();
            proptest::prop_assert_eq!(s.concat(), data.clone());
            let mut at = 0;
            for c in &s {
                proptest::prop_assert!(starts.contains(&at) || at == 0);
                at += c.len();
            }
        }
    }

    /// Released pieces of a mapped file read the same afterwards, and a piece that is not
    /// part of the map is left alone.
    #[test]
    fn released_pages_read_the_same() {
        let path = std::env::temp_dir().join(format!("tokstat-release-{}", std::process::id()));
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let map = unsafe { memmap2::Mmap::map(&File::open(&path).unwrap()).unwrap() };
        release(&map, &map[5_000..150_000]);
        release(&map, &data[..]);
        release(&map, &map[..]);
        assert!(map[..] == data[..]);
        drop(map);
        std::fs::remove_file(&path).unwrap();
    }

    proptest::proptest! {
        /// A stream's chunks end on newlines and join up to the stream, whether they are
        /// read into new buffers or into recycled ones full of other bytes.
        #[test]
        fn stream_chunks_join_up(
            lines in proptest::collection::vec(0usize..300, 0..40),
            target in 1usize..200,
            recycled in proptest::collection::vec(0usize..2000, 0..6),
        ) {
            let mut data = Vec::new();
            for (k, &len) in lines.iter().enumerate() {
                data.extend(std::iter::repeat_n(b'a' + (k % 26) as u8, len));
                data.push(b'\n');
            }
            data.pop();
            let (tx, rx) = std::sync::mpsc::channel();
            for &n in &recycled {
                tx.send(vec![b'Z'; n]).unwrap();
            }
            let chunks = StreamChunks::new(Box::new(io::Cursor::new(data.clone())), target)
                .recycle(rx);
            let mut joined = Vec::new();
            let mut count = 0;
            for c in chunks {
                let c = c.unwrap();
                joined.extend_from_slice(c.bytes());
                count += 1;
                if joined.len() < data.len() {
                    proptest::prop_assert!(c.bytes().ends_with(b"\n"));
                }
                // handed back at once: the next chunk is read over this one's bytes
                tx.send(c.into_buf()).unwrap();
            }
            proptest::prop_assert_eq!(&joined, &data);
            proptest::prop_assert_eq!(count == 0, data.is_empty());
        }
    }

    #[test]
    fn stems() {
        assert_eq!(Input::Path("logs/gpu3.log.zst".into()).stem(), "gpu3");
        assert_eq!(
            Input::Path("a/sglang_gpu0.log".into()).stem(),
            "sglang_gpu0"
        );
        assert_eq!(Input::Stdin.stem(), "stdin");
        // rotated parts are one instance; equal stems in different folders are told apart
        assert_eq!(Input::Path("l/gpu0.log.1.gz".into()).stem(), "gpu0");
        assert_eq!(Input::Path("l/gpu0.log.12".into()).stem(), "gpu0");
        assert_eq!(Input::Path("l/v0.5.log".into()).stem(), "v0.5");
        let names = instance_names(&[
            Input::Path("node1/gpu0.log".into()),
            Input::Path("node1/gpu0.log.1".into()),
            Input::Path("node2/gpu0.log".into()),
            Input::Path("node2/gpu1.log".into()),
        ]);
        assert_eq!(names, ["node1/gpu0", "node1/gpu0", "node2/gpu0", "gpu1"]);
    }

    #[test]
    fn sniff() {
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(b"[202"), Compression::None);
    }
}
