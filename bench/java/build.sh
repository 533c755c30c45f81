#!/usr/bin/env bash
# Builds the Java side of the "against Java" benchmark into bench/java/target/feign-java-bench-0.0.1.jar.
# Usage: bench/java/build.sh   (from anywhere; needs Java 17 and Maven)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
(cd "$here" && mvn -B -q -DskipTests package)
ls -1 "$here"/target/*.jar
