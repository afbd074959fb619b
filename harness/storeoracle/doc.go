// Package storeoracle counts effects in a database: [SQLOracle] with a
// PostgreSQL query, [RedisOracle] with a Redis command. Both dial through
// the run's guard and implement the harness's optional oracle methods.
//
// Imports: the standard library, pgx, go-redis, harness and harness/report.
package storeoracle
