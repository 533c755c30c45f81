//! One raw output under `bench/results/raw/`, and what `bench/run.sh` wrote around it: the
//! command, when it started, the load average at start and end, the commit and CPU steal.
//! Files kept before the script wrote all of that (or written by hand) say less; what they do
//! not say is reported as not recorded.

use std::path::Path;

use super::{Error, Result, RAW_DIR};

/// A raw output file and its header and footer lines.
#[derive(Debug, Clone)]
pub struct RawFile {
    name: String,
    text: String,
    command: Option<String>,
    started: Option<String>,
    load_start: Option<String>,
    load_end: Option<String>,
    commit: Option<String>,
    machine: Option<String>,
    steal_percent: Option<String>,
}

impl RawFile {
    /// Reads `name` from the raw folder under `root`.
    pub fn load(root: &Path, name: &str) -> Result<RawFile> {
        if name.contains('/') || name.contains('\\') {
            return Err(Error::new(format!(
                "`{name}`: name a file of {RAW_DIR}/ by its file name"
            )));
        }
        let path = root.join(RAW_DIR).join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|err| Error::new(format!("{RAW_DIR}/{name}: {err}")))?;
        Ok(RawFile::from_text(name, text))
    }

    /// A raw file named `name` holding `text` (for tests, and for the binaries' own output).
    pub fn from_text(name: &str, text: String) -> RawFile {
        let mut file = RawFile {
            name: name.to_owned(),
            command: None,
            started: None,
            load_start: None,
            load_end: None,
            commit: None,
            machine: None,
            steal_percent: None,
            text,
        };
        file.read_header();
        file
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every line of the file.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.text.lines()
    }

    /// The command that produced the output, as its first line gives it.
    pub fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }

    fn read_header(&mut self) {
        let mut lines = self.text.lines();
        self.command = lines.next().map(|first| {
            first
                .trim_start_matches("$ ")
                .trim_start_matches("# ")
                .trim()
                .to_owned()
        });
        for line in self.text.lines().skip(1) {
            let Some(comment) = line.strip_prefix("# ") else {
                continue;
            };
            if let Some(footer) = comment.strip_prefix("end ") {
                self.load_end = load_after(footer);
                self.steal_percent = footer
                    .split_once("cpu steal ")
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .filter(|value| value.parse::<f64>().is_ok())
                    .map(str::to_owned);
                continue;
            }
            if let Some(commit) = comment.strip_prefix("commit ") {
                self.commit = Some(commit.trim().to_owned());
                continue;
            }
            if let Some(machine) = comment.strip_prefix("machine: ") {
                self.machine = Some(machine.trim().to_owned());
                continue;
            }
            if self.machine.is_none() {
                // `# 2026-12-01T00:34Z, 2 cores, load average ...`
                self.machine = comment
                    .split(", ")
                    .find(|part| {
                        part.ends_with(" cores") && part[..part.len() - 6].parse::<u32>().is_ok()
                    })
                    .map(str::to_owned);
            }
            if self.started.is_none() {
                self.started = comment
                    .split([',', ' '])
                    .find(|word| looks_like_date(word))
                    .map(str::to_owned);
            }
            if self.load_start.is_none() {
                self.load_start = load_after(comment);
            }
        }
    }

    /// One sentence: the file (linked), its command, commit, start, load and steal, and what
    /// of those it did not record.
    pub fn describe(&self) -> String {
        let mut said = vec![format!("[`{0}`]({RAW_DIR}/{0})", self.name)];
        let mut missing = Vec::new();
        match &self.command {
            Some(command) if !command.is_empty() => said.push(format!("`{command}`")),
            _ => missing.push("the command"),
        }
        match &self.commit {
            Some(commit) => said.push(format!("commit {}", short_commit(commit))),
            None => missing.push("the commit"),
        }
        if let Some(started) = &self.started {
            said.push(format!("started {started}"));
        }
        match &self.machine {
            Some(machine) => said.push(format!("on {machine}")),
            None => missing.push("the machine"),
        }
        match (&self.load_start, &self.load_end) {
            (Some(start), Some(end)) => said.push(format!("load average {start} → {end}")),
            (Some(start), None) => {
                said.push(format!("load average {start} at start"));
                missing.push("the load at the end");
            }
            (None, Some(end)) => {
                said.push(format!("load average {end} at the end"));
                missing.push("the load at start");
            }
            (None, None) => missing.push("the load"),
        }
        match &self.steal_percent {
            Some(steal) => said.push(format!("CPU steal {steal} %")),
            None => missing.push("CPU steal"),
        }
        let mut sentence = format!("Raw output: {}", said.join(", "));
        if !missing.is_empty() {
            sentence.push_str(&format!("; not recorded: {}", missing.join(", ")));
        }
        sentence.push('.');
        sentence
    }
}

/// `abc1234`, or `abc1234 with uncommitted changes`.
fn short_commit(commit: &str) -> String {
    match commit.split_once(' ') {
        Some((hash, rest)) => format!("{} {rest}", &hash[..hash.len().min(7)]),
        None => commit[..commit.len().min(7)].to_owned(),
    }
}

/// `2026-12-01`, `2026-12-01T00:34Z`.
fn looks_like_date(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[5..7].iter().all(u8::is_ascii_digit)
        && bytes[8..10].iter().all(u8::is_ascii_digit)
}

/// The one-minute load average after "load average" (and an optional "at start:").
fn load_after(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("load average")?;
    let rest = rest.trim_start_matches([' ', ':']);
    let rest = rest.strip_prefix("at start:").unwrap_or(rest);
    let first = rest.split([' ', ',']).find(|word| !word.is_empty())?;
    first.parse::<f64>().ok().map(|_| first.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_run_sh_writes() {
        let file = RawFile::from_text(
            "2027-01-02-x.txt",
            "$ cargo run --bin x\n\
             # 2027-01-02T03:04Z, 2 cores, load average 0.52 0.40 0.30\n\
             # commit 0123456789abcdef with uncommitted changes\n\
             # machine: some CPU\n\
             out\n\
             # end 2027-01-02T03:09Z, load average 1.25 0.9 0.5, exit status 0, cpu steal 0.31 %\n"
                .to_owned(),
        );
        assert_eq!(
            file.describe(),
            "Raw output: [`2027-01-02-x.txt`](bench/results/raw/2027-01-02-x.txt), \
             `cargo run --bin x`, commit 0123456 with uncommitted changes, \
             started 2027-01-02T03:04Z, on some CPU, load average 0.52 → 1.25, CPU steal 0.31 %."
        );
    }

    #[test]
    fn says_what_an_older_file_did_not_record() {
        let file = RawFile::from_text(
            "old.txt",
            "# cargo bench\n# 2026-12-01, shared 2-core machine (load average at start: 1.40 1.82 4.65)\n"
                .to_owned(),
        );
        assert_eq!(
            file.describe(),
            "Raw output: [`old.txt`](bench/results/raw/old.txt), `cargo bench`, started \
             2026-12-01, load average 1.40 at start; not recorded: the commit, the machine, the \
             load at the end, CPU steal."
        );
    }
}
