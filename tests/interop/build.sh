#!/usr/bin/env bash
# Builds the interop fixtures: the Spring Eureka server and the Spring Boot client app.
# Usage: tests/interop/build.sh   (from anywhere; needs Java 17 and Maven)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for project in eureka-server java-svc; do
    echo "building tests/interop/$project"
    (cd "$here/$project" && mvn -B -q -DskipTests package)
done
ls -1 "$here"/eureka-server/target/*.jar "$here"/java-svc/target/*.jar
