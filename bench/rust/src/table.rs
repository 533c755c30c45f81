//! Markdown tables, padded so that they also read well in a terminal.

use std::fmt;

/// A table with a header row; cells are right-aligned except the leading text columns.
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    text_columns: usize,
}

impl Table {
    /// A table with these column titles.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            text_columns: 1,
        }
    }

    /// Left-aligns the first `columns` columns (default 1).
    #[must_use]
    pub fn text_columns(mut self, columns: usize) -> Table {
        self.text_columns = columns;
        self
    }

    /// Appends a row; missing cells are left empty, extra ones dropped.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|column| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|row| row[column].chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(3)
            })
            .collect();
        let line = |f: &mut fmt::Formatter<'_>, row: &[String]| -> fmt::Result {
            for (column, (cell, width)) in row.iter().zip(&widths).enumerate() {
                if column < self.text_columns {
                    write!(f, "| {cell:<width$} ")?;
                } else {
                    write!(f, "| {cell:>width$} ")?;
                }
            }
            writeln!(f, "|")
        };
        line(f, &self.header)?;
        for (column, width) in widths.iter().enumerate() {
            let dashes = "-".repeat(*width);
            if column < self.text_columns {
                write!(f, "|-{dashes}-")?;
            } else {
                write!(f, "|-{dashes}:")?;
            }
        }
        writeln!(f, "|")?;
        for row in &self.rows {
            line(f, row)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn renders_a_padded_markdown_table() {
        let mut table = Table::new(["variant", "rps"]);
        table.row(["raw", "12345"]);
        table.row(["feign"]);
        assert_eq!(
            table.to_string(),
            "| variant |   rps |\n|---------|------:|\n| raw     | 12345 |\n| feign   |       |\n"
        );
    }
}
