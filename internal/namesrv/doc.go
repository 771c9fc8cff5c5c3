// Package namesrv is the in-repo RocketMQ NameServer: brokers register
// their topics with it, clients ask it for topic routes (docs/PROTOCOL.md §9.12).
// It answers like an Apache RocketMQ 4.9.8 NameServer, so the Java client,
// the official Go client and this module's client all work against it.
//
//	ns, err := namesrv.New(namesrv.Config{})
//	err = ns.Start("127.0.0.1:0")
//	addr := ns.Addr()
//	defer ns.Close(ctx)
//
// # Requests
//
// Every NameServer request code of 4.9.8 is served, plus 5.x's
// REGISTER_TOPIC_IN_NAMESRV; other codes get REQUEST_CODE_NOT_SUPPORTED.
// One file per request code (100_kv_config.go, 103_register_broker.go, …).
//
//   - REGISTER_BROKER takes the JSON body or, with compressed=true, the zlib
//     form (whose layout depends on the broker's version); a non-zero
//     bodyCrc32 is checked (SYSTEM_ERROR "crc32 not match"). A master's
//     topic table replaces its queue data when the broker is new or its
//     DataVersion changed; slaves learn their master's address.
//   - GET_ROUTEINFO_BY_TOPIC answers in fastjson's form (bare integer
//     brokerAddrs keys) to requests with version < 401 (the official Go
//     client says 317) and in standard JSON to version >= 401 or
//     acceptStandardJsonOnly=true, exactly as 4.9.8 does. Unknown topics get
//     TOPIC_NOT_EXIST with Java's remark, FAQ link included.
//   - Cluster info, topic lists and KV tables are written in fastjson's form,
//     as Java always does.
//
// # Liveness
//
// A broker address is forgotten when it has not registered for
// Config.BrokerExpiry (checked every Config.ScanInterval; its connection is
// then closed, as Java does), when the connection it last registered over
// closes, or on UNREGISTER_BROKER. A broker name without addresses loses its
// queue data and cluster membership; topics left without brokers disappear.
//
// # Concurrency
//
// Requests run concurrently (internal/server). One RWMutex guards the route
// tables and the KV config has its own; neither is held across I/O: routes
// are copied out and encoded after unlocking, and the KV file is written
// outside the table lock (saves are serialised so the file never regresses).
package namesrv
