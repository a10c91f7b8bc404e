#!/usr/bin/env bash
# tools/scaffold.sh <libs|apps> <name> <tags-json>: the three files every Nx project here starts with.
set -euo pipefail
kind=$1 name=$2 tags=$3
dir="$kind/$name"; mkdir -p "$dir/src"
type=$([ "$kind" = apps ] && echo application || echo library)
cat > "$dir/project.json" <<JSON
{
  "name": "$name",
  "\$schema": "../../node_modules/nx/schemas/project-schema.json",
  "sourceRoot": "$dir/src",
  "projectType": "$type",
  "tags": $tags
}
JSON
echo "module.exports = { ...require('../../jest.preset.cjs'), displayName: '$name', rootDir: __dirname };" > "$dir/jest.config.cjs"
echo "module.exports = [...require('../../eslint.config.cjs')];" > "$dir/eslint.config.cjs"
