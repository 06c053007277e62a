# Sourced by scripts/deps.sh and scripts/test.sh.
# npm_pinned DIR [npm ci flags...]: installs DIR's npm packages exactly as its
# package-lock.json pins them (npm ci), unless that lock is the one installed
# last (a copy kept as node_modules/.msp-installed-lock).
npm_pinned() {
  local dir=$1
  shift
  cmp -s "$dir/package-lock.json" "$dir/node_modules/.msp-installed-lock" 2>/dev/null && return 0
  (cd "$dir" && npm ci "$@" --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.msp-installed-lock)
}
