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
	j := at
	colon := -1
	for j > 0 && at-j < maxUserinfo {
		c := s[j-1]
		if c == '/' {
			break
		}
		if c <= ' ' || isOneOf(c, "\"'`<>?#\\") {
			return Match{}, false
		}
		if c == ':' {
			colon = j - 1
		}
		j--
	}
	if colon < 0 || !hasSuffixAt(s, j, "://") {
		return Match{}, false
	}
	user, pass := s[j:colon], s[colon+1:at]
	if pass == "" || hasPrefixAt(pass, 0, markerPrefix) || pass == user || isPlaceholder(pass) {
		return Match{}, false
	}
	kind := KindURLCredentials
	se := j - 3
	sb := se
	for sb > 0 && se-sb < 16 && (isAlnum(s[sb-1]) || isOneOf(s[sb-1], "+.-")) {
		sb--
	}
	for _, d := range databaseSchemes {
		if equalFold(s[sb:se], d) {
			kind = KindDatabaseURL
			break
		}
	}
	return Match{kind, colon + 1, at}, true
}
