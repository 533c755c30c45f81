//! Run with `cargo run -p openapi-example`: writes the OpenAPI 3.1 document of the example's
//! `OrderService` client to standard output and stops.
//!
//! `-- --out openapi.json` writes it to a file instead; `-- --check server.json` (or
//! `-- --check http://127.0.0.1:8080/v3/api-docs`) then compares it with the server's published
//! spec, prints every mismatch and exits with 1 when there is any (2 on any other failure), so
//! a CI step fails when the client and the server disagree.

use std::process::ExitCode;

use openapi_example::{check, document, parse_args};

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::from(2);
        }
    };
    // A `Value` always serializes.
    let text = serde_json::to_string_pretty(&document()).unwrap_or_default();
    match &args.out {
        Some(path) => {
            if let Err(err) = tokio::fs::write(path, text + "\n").await {
                eprintln!("cannot write {}: {err}", path.display());
                return ExitCode::from(2);
            }
        }
        None if args.check.is_none() => println!("{text}"),
        None => {}
    }
    let Some(source) = &args.check else {
        return ExitCode::SUCCESS;
    };
    match check(source).await {
        Ok(mismatches) if mismatches.is_empty() => {
            println!("the client agrees with {source}");
            ExitCode::SUCCESS
        }
        Ok(mismatches) => {
            for mismatch in &mismatches {
                println!("{mismatch}");
            }
            println!("{} mismatch(es) with {source}", mismatches.len());
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("cannot check against {source}: {err}");
            ExitCode::from(2)
        }
    }
}
