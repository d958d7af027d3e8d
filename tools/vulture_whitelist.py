"""What vulture cannot see being used, each with the reason it stays (read by vulture, never run).

vulture ([tool.vulture] in pyproject.toml) reports a name nothing in hubcore, hubhttp, hubmcp,
hubcli or tools reads. Each line below names one such name as used, and says who uses it: a
framework calling it by protocol, a library reading an attribute it sets, or a test reading a seam
the hub keeps for it. A name that is really unused is deleted instead of listed here. The fields of
the REST response models are not listed: tools/dead_code.py passes them by rule (pydantic writes
them into every JSON body and the OpenAPI document; no Python reads them by name).
"""
# ruff: noqa: B018, F821

# -- set for a library, which reads them ------------------------------------------------------------
_.graceful_timeout  # hubcli/serve.py: hypercorn's Config, read by hypercorn.serve
_.accesslog  # hubcli/serve.py, tools/mcp-conformance/run.py: hypercorn's Config
_.errorlog  # hubcli/serve.py, tools/mcp-conformance/run.py: hypercorn's Config
_.certfile  # hubcli/serve.py: hypercorn's Config (TLS)
_.keyfile  # hubcli/serve.py: hypercorn's Config (TLS)
_.alpn_protocols  # hubcli/serve.py: hypercorn's Config (HTTP/2 over TLS)
_.url_rule_class  # hubhttp/app.py: Quart builds every route's rule with this class (LazyRule)
_.request_class  # hubhttp/app.py: Quart makes every request with this class (HubRequest)
_.row_factory  # hubcore/store/connection.py: sqlite3 builds every row with it

# -- called by a framework, by protocol -----------------------------------------------------------
_.field_title_should_be_set  # hubcore/services/requests.py, hubhttp/api/responses.py, tools/bench:
# a GenerateJsonSchema override pydantic calls while it writes a schema
_.handle_starttag  # hubcore/services/search/sources.py: html.parser.HTMLParser calls it
_.handle_endtag  # hubcore/services/search/sources.py: HTMLParser calls it
_.handle_data  # hubcore/services/search/sources.py: HTMLParser calls it
_.attrs  # hubcore/services/search/sources.py: handle_starttag's parameter, named by HTMLParser
_._admit_session  # hubmcp/framing.py: overrides the mcp SDK's session manager method (mcp 2.3.0)
_.do_POST  # tools/bench/push.py: http.server's BaseHTTPRequestHandler dispatches POST to it
_.log_message  # tools/bench/push.py: BaseHTTPRequestHandler's logging hook, silenced
_.__cdp  # tools/bench/webapp_inbox.py: keeps the CDP session alive as long as the page

# -- request-model fields: accepted from a client, so declared -------------------------------------
_.alg  # hubcore/services/artifacts/models.py Envelope: checked (one value), stored with the version
_.okf_version  # hubcore/services/kb/frontmatter.py: a front-matter member the kb accepts and keeps
_.expirationTime  # hubcore/services/push/devices.py: sent by every browser's subscription; ignored

# -- compared, not read by name -------------------------------------------------------------------
_.inode  # hubcore/services/health.py Identity: (device, inode) equality says the directory is the same
_.eof  # hubcore/services/artifacts/diffs.py Line: the parse keeps the no-newline marker (lossless;
# tests/artifacts/test_diffs.py checks it)

# -- seams and counters the tests read (the hub's behaviour is observed through them) -------------
_.FakeClock  # hubcore/clock.py: the Clock the tests drive (tests/conftest.py `clock`)
_.advance  # hubcore/clock.py FakeClock.advance: how a test moves time
_.record_call  # hubcore/services/brains.py: the replay log's direct write (tests/sessions/test_seal.py)
_.streams_of  # hubcore/services/changes.py: open streams per holder (tests/feed/test_wait.py)
_.listeners  # hubcore/services/changes.py: waits plus streams open (tests/feed)
_.queue_depth  # hubcore/store/actor.py: commands queued on a writer (tests/core/test_store_actor.py)
_.unanswered  # hubcore/store/actor.py: commands queued or on the writer thread (tests/sessions/test_seal.py)
_.peak_depth  # hubcore/store/actor.py ActorStats (tests/core/test_store_actor.py)
_.waiting_for_room  # hubcore/store/actor.py ActorStats (tests/core/test_store_actor.py)
_.failed_commands  # hubcore/store/actor.py ActorStats (tests/core/test_store_actor.py)
_.last_batch  # hubcore/store/actor.py ActorStats (tests/core/test_store_actor.py)
_.mean_batch  # hubcore/store/actor.py ActorStats (tests/core/test_store_actor.py)
_.ENDED  # hubcore/store/brain.py: the seal a session's `ended` status writes (brains._sync_seal passes
# the status through); tests/sessions/test_seal.py compares with it
_.is_held  # hubcore/store/blobs.py: a blob kept from removal (tests/artifacts/test_blobs.py)
_.opened_total  # hubcore/store/pool.py, readcache.py: connections opened (tests/core)
_.closed_total  # hubcore/store/pool.py: connections closed (tests/core/test_actor_pool.py)
_.open_count  # hubcore/store/pool.py, readcache.py: connections open now (tests/core)
_.is_open  # hubcore/store/pool.py, readcache.py: whether a file's connection is open (tests/core)
_.last_at  # hubcore/ops/integrity.py: when the sampler last ran (tests/ops/test_integrity.py)
_.checkpoints  # hubcore/services/kb/files.py: checkpoints taken (tests/kb/test_walk_renew.py, tools/bench/kb.py)
_.walks  # hubcore/services/kb/views.py: walks made (tests/kb)
_.published  # hubcore/services/changes.py: changes published (tests/artifacts/test_service.py)
_.embedded  # hubcore/services/search/semantic.py: vectors written since start; nothing reads it yet
# (search is being reworked by issue 28 part 5: to remove or expose there)
