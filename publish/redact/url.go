package redact

// URL credentials: scheme://user:password@host. Only the password is masked,
// so the scheme, user and host stay readable. Database schemes get their own
// kind.

const maxUserinfo = 256

var databaseSchemes = []string{
	"postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss",
	"amqp", "amqps", "mssql", "sqlserver", "clickhouse", "cockroachdb", "oracle", "couchdb",
	"memcached", "neo4j", "neo4j+s", "bolt", "cassandra", "influxdb",
}

// urlCredentials is triggered on the '@' ending the userinfo.
func urlCredentials(s string, at int) (Match, bool) {
	j, colon, ok := userinfo(s, at)
	if !ok || colon < 0 || !hasSuffixAt(s, j, "://") {
		return Match{}, false
	}
	user, pass := s[j:colon], s[colon+1:at]
	if pass == "" || hasPrefixAt(pass, 0, markerPrefix) || pass == user || isPlaceholder(pass) {
		return Match{}, false
	}
	kind := KindURLCredentials
	if databaseScheme(s, j-3) {
		kind = KindDatabaseURL
	}
	return Match{kind, colon + 1, at}, true
}

// userinfo reads back from the '@' at at to the start of the userinfo
// (after a '/'), and where its first ':' is (-1: none); ok is false for a
// byte no userinfo holds.
func userinfo(s string, at int) (j, colon int, ok bool) {
	colon = -1
	for j = at; j > 0 && at-j < maxUserinfo; j-- {
		c := s[j-1]
		if c == '/' {
			break
		}
		if c <= ' ' || isOneOf(c, "\"'`<>?#\\") {
			return 0, 0, false
		}
		if c == ':' {
			colon = j - 1
		}
	}
	return j, colon, true
}

// databaseScheme reports whether the scheme ending at se names a
// database.
func databaseScheme(s string, se int) bool {
	sb := se
	for sb > 0 && se-sb < 16 && (isAlnum(s[sb-1]) || isOneOf(s[sb-1], "+.-")) {
		sb--
	}
	for _, d := range databaseSchemes {
		if equalFold(s[sb:se], d) {
			return true
		}
	}
	return false
}
