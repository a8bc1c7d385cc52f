import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-echo, px-find, px-get and px-push against Orthanc's DICOMweb plugin (PS3.18), the same Orthanc
/// answering DIMSE: QIDO-RS answers equal C-FIND answers, WADO-RS retrievals equal the loaded files,
/// STOW-RS then WADO-RS gives the stored data sets back; errors are JSON with a non-zero exit and
/// leave no file at a final name.
@Suite(
    "px commands against Orthanc's DICOMweb", .tags(.integration), .integrationTier, .serialized,
    OrthancCommandPeer(dicomWeb: true), .timeLimit(.minutes(10)))
struct DICOMWebCommandTests {
    static func context() throws -> OrthancCommandPeer.Context {
        try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
    }

    static func url(_ context: OrthancCommandPeer.Context) -> String {
        "http://127.0.0.1:\(context.httpPort)/dicom-web"
    }

    @Test("px-echo of a DICOMweb URL: what it checked (QIDO-RS, HTTP 200, a JSON array), no DIMSE status")
    func echo() async throws {
        let context = try Self.context()
        let run = try await PeerHarness.runAsync("px-echo", [Self.url(context)])
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["status"]?.stringValue == "success")
        #expect(run.json?["backend"]?.stringValue == "dicomweb")
        let data = try #require(run.json?["data"], "\(run.stdout)")
        #expect(data["checked"]?.stringValue == "QIDO-RS", "\(run.stdout)")
        #expect(data["url"]?.stringValue == Self.url(context))
        #expect(data["host"]?.stringValue == "127.0.0.1")
        #expect(data["port"] == .number(String(context.httpPort)))
        #expect(data["request"]?.stringValue == "GET /studies?limit=1")
        #expect(data["httpStatus"] == .number("200"), "\(run.stdout)")
        #expect(data["contentType"]?.stringValue?.contains("json") == true, "\(run.stdout)")
        // The corpus is loaded: the one-study search found one.
        #expect(data["matches"] == .number("1"), "\(run.stdout)")
        // A DICOMweb service has no AE titles and no DIMSE status.
        for key in ["dimseStatus", "calledAETitle", "callingAETitle"] {
            #expect(data[key] == nil, "\(key) in \(run.stdout)")
        }

        // Not a DICOMweb service at that path: the HTTP status in a JSON error, exit 1.
        let wrong = try await PeerHarness.runAsync("px-echo", ["http://127.0.0.1:\(context.httpPort)/not-dicom-web"])
        #expect(wrong.exitCode == 1, "\(wrong.stdout)")
        #expect(wrong.json?["status"]?.stringValue == "error")
        #expect(wrong.json?["backend"]?.stringValue == "dicomweb")
        #expect(wrong.json?["error"]?["code"]?.stringValue == "httpFailure", "\(wrong.stdout)")
        #expect(wrong.json?["error"]?["details"]?["httpStatus"]?.stringValue == "404", "\(wrong.stdout)")
    }

    /// The `data` of px-find's dicom-json answer, sorted by `uidTag` so order does not count.
    static func findData(_ peer: String, _ arguments: [String], uidTag: String) async throws -> [JSONValue] {
        let run = try await PeerHarness.runAsync("px-find", [peer, "--format", "dicom-json"] + arguments)
        #expect(run.exitCode == 0, "px-find \(peer) \(arguments): \(run.stdout) \(run.stderr)")
        let data = try #require(run.json?["data"]?.arrayValue, "px-find \(peer) printed no data: \(run.stdout)")
        return data.sorted {
            ($0[uidTag]?["Value"]?.arrayValue?.first?.stringValue ?? "")
                < ($1[uidTag]?["Value"]?.arrayValue?.first?.stringValue ?? "")
        }
    }

    @Test(
        "px-find: QIDO-RS answers equal C-FIND answers of the same Orthanc at study, series and image level",
        arguments: [
            (["--level", "study"], "0020000D"),
            (["--level", "study", "--PatientName", "Doe*", "--StudyDate", "19000101-29991231"], "0020000D"),
            (["--level", "series", "-k", "Modality"], "0020000E"),
            (["--level", "image", "-k", "InstanceNumber", "-k", "SOPClassUID"], "00080018"),
        ])
    func findEqualsCFind(arguments: [String], uidTag: String) async throws {
        let context = try Self.context()
        let dimse = try await Self.findData(
            "\(OrthancCommandPeer.orthancAETitle)@127.0.0.1:\(context.dicomPort)", arguments + ["--backend", "native"],
            uidTag: uidTag)
        let web = try await Self.findData(Self.url(context), arguments, uidTag: uidTag)
        #expect(!dimse.isEmpty)
        #expect(web.count == dimse.count)
        for (a, b) in zip(dimse, web) {
            // Orthanc adds RetrieveAETitle (0008,0054) to C-FIND answers unasked; a DICOMweb service has no AE title.
            let a = JSONValue.object((a.objectValue ?? []).filter { $0.key != "00080054" })
            #expect(
                a == b, "C-FIND \(JSONValue.array([a]).serialized()) vs QIDO-RS \(JSONValue.array([b]).serialized())")
        }
    }

    @Test("px-find without --level (studies with their series): same pypx JSON as C-FIND's")
    func twoPhaseFind() async throws {
        let context = try Self.context()
        let dimse = try await PeerHarness.runAsync(
            "px-find", ["\(OrthancCommandPeer.orthancAETitle)@127.0.0.1:\(context.dicomPort)", "--backend", "native"])
        let web = try await PeerHarness.runAsync("px-find", [Self.url(context)])
        #expect(web.exitCode == 0, "\(web.stdout) \(web.stderr)")
        func studies(_ run: PeerHarness.Run) -> [JSONValue] {
            (run.json?["data"]?.arrayValue ?? []).sorted {
                ($0["StudyInstanceUID"]?["value"]?.stringValue ?? "")
                    < ($1["StudyInstanceUID"]?["value"]?.stringValue ?? "")
            }
        }
        #expect(studies(dimse).count == context.corpus.studies.count)
        #expect(studies(web).count == studies(dimse).count)
        for (a, b) in zip(studies(dimse), studies(web)) {
            // Order may differ between the protocols: pypx's `uid` counter (the position) and series order are
            // left out, as are the per-series `command` (it names the peer) and RetrieveAETitle, which Orthanc
            // adds to C-FIND answers unasked (a DICOMweb service has no AE title).
            let peerSpecific: Set<String> = ["uid", "command", "RetrieveAETitle"]
            func normalised(_ entry: JSONValue) -> [JSONMember] {
                var members = (entry.objectValue ?? []).filter { !peerSpecific.contains($0.key) }
                for i in members.indices where members[i].key == "series" {
                    let sorted = (members[i].value.arrayValue ?? []).sorted {
                        ($0["SeriesInstanceUID"]?["value"]?.stringValue ?? "")
                            < ($1["SeriesInstanceUID"]?["value"]?.stringValue ?? "")
                    }
                    members[i].value = .array(sorted.map { .object(normalised($0)) })
                }
                return members
            }
            let left = normalised(a)
            let right = normalised(b)
            let differing = Set(left.map(\.key)).union(right.map(\.key)).filter { key in
                left.first { $0.key == key }?.value != right.first { $0.key == key }?.value
            }
            #expect(differing.isEmpty, "C-FIND and QIDO-RS differ in \(differing.sorted())")
        }
    }

    /// Data sets (by SOP Instance UID) of the Part 10 files px-get reported.
    static func retrieved(_ run: PeerHarness.Run) throws -> [String: (path: String, dataSet: DataSet)] {
        var out: [String: (String, DataSet)] = [:]
        for get in run.json?["data"]?["gets"]?.arrayValue ?? [] {
            for instance in get["instances"]?.arrayValue ?? [] {
                let path = try #require(instance["path"]?.stringValue)
                let dataSet = try Part10File(contentsOf: path).dataSet
                out[dataSet.string(.sopInstanceUID) ?? "?"] = (path, dataSet)
            }
        }
        return out
    }

    @Test("px-get of a DICOMweb URL: each study's instances, identical to the loaded data sets, placed in the layout")
    func getEqualsLoaded() async throws {
        let context = try Self.context()
        let root = context.work + "/wado-get"
        var seen: Set<String> = []
        for (study, instances) in context.corpus.studies {
            let run = try await PeerHarness.runAsync(
                "px-get", [Self.url(context), "--StudyInstanceUID", study, "-d", root])
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            #expect(run.json?["backend"]?.stringValue == "dicomweb")
            #expect(run.json?["data"]?["completed"] == .number(String(instances.count)), "\(run.stdout)")
            let got = try Self.retrieved(run)
            #expect(got.count == instances.count)
            for (uid, file) in got {
                #expect(file.path.hasPrefix(root + "/"))
                let original = try #require(context.corpus.dataSets[uid], "unexpected instance \(uid)")
                let differences = OrthancCommandTests.differences(original, file.dataSet)
                #expect(differences.isEmpty, "\(file.path) differs from the loaded instance in \(differences)")
                seen.insert(uid)
            }
        }
        #expect(seen == Set(context.corpus.dataSets.keys))
        #expect(!FileManager.default.fileExists(atPath: root + "/.px-incoming"))
    }

    @Test("px-get of one series and of one instance by URL")
    func getSeriesAndInstance() async throws {
        let context = try Self.context()
        let (seriesUID, members) = try #require(context.corpus.series.max { $0.value.count < $1.value.count })
        let studyUID = try #require(members.first?.string(.studyInstanceUID))
        let sopUID = try #require(members.first?.string(.sopInstanceUID))
        let root = context.work + "/wado-series"
        let series = try await PeerHarness.runAsync(
            "px-get", [Self.url(context), "--StudyInstanceUID", studyUID, "--SeriesInstanceUID", seriesUID, "-d", root])
        #expect(series.exitCode == 0, "\(series.stdout) \(series.stderr)")
        #expect(try Set(Self.retrieved(series).keys) == Set(members.compactMap { $0.string(.sopInstanceUID) }))
        let one = try await PeerHarness.runAsync(
            "px-get",
            [
                Self.url(context), "--StudyInstanceUID", studyUID, "--SeriesInstanceUID", seriesUID, "--SOPInstanceUID",
                sopUID, "-d", root,
            ])
        #expect(one.exitCode == 0, "\(one.stdout) \(one.stderr)")
        #expect(try Array(Self.retrieved(one).keys) == [sopUID])
    }

    @Test(
        "px-push of make-corpus.sh's files (seven transfer syntaxes) by STOW-RS, then px-get by WADO-RS: identical data sets"
    )
    func stowThenWado() async throws {
        let context = try Self.context()
        let corpus = context.work + "/stow-corpus"
        let made = try await PeerHarness.runAsync(TestSupport.repositoryRoot + "/scripts/make-corpus.sh", [corpus])
        try #require(made.exitCode == 0, "make-corpus.sh: \(made.stderr)")
        var originals: [String: DataSet] = [:]
        var syntaxes: Set<String> = []
        var paths: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: corpus).sorted() where name.hasSuffix(".dcm") {
            paths.append(corpus + "/" + name)
            let file = try Part10File(contentsOf: corpus + "/" + name)
            let uid = try #require(file.dataSet.string(.sopInstanceUID))
            originals[uid] = file.dataSet
            syntaxes.insert(file.transferSyntax.uid)
        }
        #expect(syntaxes.count >= 5, "\(syntaxes)")
        let push = try await PeerHarness.runAsync("px-push", [Self.url(context)] + paths)
        #expect(push.exitCode == 0, "\(push.stdout) \(push.stderr)")
        #expect(push.json?["backend"]?.stringValue == "dicomweb")
        let files = push.json?["data"]?["files"]?.arrayValue ?? []
        #expect(files.count == originals.count, "\(push.stdout)")
        #expect(push.json?["data"]?["completed"] == .number(String(originals.count)), "\(push.stdout)")

        let root = context.work + "/stow-back"
        var back: [String: DataSet] = [:]
        for study in Set(originals.values.compactMap { $0.string(.studyInstanceUID) }) {
            let run = try await PeerHarness.runAsync(
                "px-get", [Self.url(context), "--StudyInstanceUID", study, "-d", root])
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            for (uid, file) in try Self.retrieved(run) { back[uid] = file.dataSet }
        }
        #expect(Set(back.keys) == Set(originals.keys))
        for (uid, original) in originals {
            guard let dataSet = back[uid] else { continue }
            let differences = OrthancCommandTests.differences(original, dataSet)
            #expect(differences.isEmpty, "\(uid) differs after STOW-RS and WADO-RS in \(differences)")
        }
    }

    @Test(
        "errors: a wrong URL, 404 for an unknown study, move to a DICOMweb peer: JSON errors, non-zero exits, no files")
    func errors() async throws {
        let context = try Self.context()
        let root = context.work + "/errors"
        let closed = try TestSupport.holdPort()
        defer { closed.release() }
        let closedPort = closed.port
        let refused = try await PeerHarness.runAsync("px-echo", ["http://127.0.0.1:\(closedPort)/dicom-web"])
        #expect(refused.exitCode == 1, "\(refused.stdout)")
        #expect(refused.json?["status"]?.stringValue == "error")
        #expect(refused.json?["error"]?["code"]?.stringValue == "connectionRefused", "\(refused.stdout)")
        #expect(refused.json?["backend"]?.stringValue == "dicomweb", "\(refused.stdout)")
        #expect(refused.json?["data"] == .null, "\(refused.stdout)")

        let wrongPath = try await PeerHarness.runAsync(
            "px-find", ["http://127.0.0.1:\(context.httpPort)/not-dicom-web", "--level", "study"])
        #expect(wrongPath.exitCode == 1, "\(wrongPath.stdout)")
        #expect(wrongPath.json?["error"]?["code"]?.stringValue == "httpFailure", "\(wrongPath.stdout)")
        #expect(wrongPath.json?["error"]?["details"]?["httpStatus"]?.stringValue == "404", "\(wrongPath.stdout)")

        let unknown = try await PeerHarness.runAsync(
            "px-get", [Self.url(context), "--StudyInstanceUID", "1.2.3.999", "-d", root])
        #expect(unknown.exitCode == 1, "\(unknown.stdout)")
        #expect(unknown.json?["error"]?["code"]?.stringValue == "httpFailure", "\(unknown.stdout)")
        #expect(unknown.json?["error"]?["details"]?["httpStatus"]?.stringValue == "404", "\(unknown.stdout)")
        #expect(
            unknown.json?["error"]?["details"]?["archiveMessage"]?.stringValue?.isEmpty == false, "\(unknown.stdout)")
        #expect(Self.files(under: root).isEmpty)

        let move = try await PeerHarness.runAsync(
            "px-move", [Self.url(context), "--destination", "X", "--StudyInstanceUID", "1.2.3"])
        #expect(move.exitCode == 64, "\(move.stdout)")
        #expect(
            move.json?["error"]?["message"]?.stringValue?.contains("not supported for a DICOMweb peer") == true,
            "\(move.stdout)")
    }

    /// A scripted WADO-RS server; the first path segment picks its behaviour:
    /// `eof` and `lying` stop in the middle of the second part (the body ends at EOF without a
    /// Content-Length, or the Content-Length promises more than is sent); `busy` answers 503 with
    /// Retry-After: 0 twice, then one complete part; `auth` answers 401 unless the request has
    /// `Authorization: Bearer s3cret`, then one complete part (an empty JSON array for a study search);
    /// `large` streams one part of
    /// `PX_LARGE_BYTES` bytes (the file's data set without Pixel Data, padded by an OB element), never
    /// held whole in memory; `html` answers 200 with a web page, as a URL that is not a DICOMweb
    /// service's may; `nopaging` answers every search with the same three studies (limit and offset
    /// ignored), `nooffset` with the first `limit` of them (offset ignored); `notdicom` sends one complete
    /// part, then a complete part that is not a DICOM file.
    /// Prints its port, then one line per request: `PATH AUTHORIZATION`.
    static let scriptedServer = #"""
        import http.server, json, os, struct, sys
        data = open(sys.argv[1], "rb").read()
        busy = {"count": 0}
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def start(self, length=None):
                self.send_response(200)
                self.send_header("Content-Type", 'multipart/related; type="application/dicom"; boundary=pxb')
                if length is None:
                    self.send_header("Connection", "close")
                else:
                    self.send_header("Content-Length", str(length))
                self.end_headers()
            def do_GET(self):
                print(self.path, self.headers.get("Authorization", "-"), flush=True)
                head = b"--pxb\r\nContent-Type: application/dicom\r\n\r\n"
                whole = head + data + b"\r\n--pxb--\r\n"
                kind = self.path.split("/")[1]
                if kind == "busy" and busy["count"] < 2:
                    busy["count"] += 1
                    self.send_response(503)
                    self.send_header("Retry-After", "0")
                    self.send_header("Content-Length", "4")
                    self.end_headers()
                    self.wfile.write(b"busy")
                    return
                if kind == "auth" and self.headers.get("Authorization") != "Bearer s3cret":
                    body = b'{"Message": "credentials required"}'
                    self.send_response(401)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if kind in ("nopaging", "nooffset"):
                    # Three studies; `nopaging` ignores limit and offset, `nooffset` ignores offset only.
                    from urllib.parse import urlparse, parse_qs
                    studies = [{"0020000D": {"vr": "UI", "Value": [f"1.2.3.{n}"]}} for n in (1, 2, 3)]
                    if kind == "nooffset":
                        studies = studies[: int(parse_qs(urlparse(self.path).query).get("limit", ["3"])[0])]
                    body = json.dumps(studies).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/dicom+json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if kind == "html":
                    body = b"<html><body>Welcome</body></html>"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if kind == "auth" and self.path.split("?")[0].endswith("/studies"):
                    # A search (px-echo's): no study here.
                    self.send_response(200)
                    self.send_header("Content-Type", "application/dicom+json")
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"[]")
                    return
                if kind == "notdicom":
                    body = whole[: -len(b"--pxb--\r\n")] + head + b"not a DICOM file" + b"\r\n--pxb--\r\n"
                    self.start(len(body))
                    self.wfile.write(body)
                    return
                if kind in ("busy", "auth"):
                    self.start(len(whole))
                    self.wfile.write(whole)
                    return
                if kind == "large":
                    total = int(os.environ["PX_LARGE_BYTES"])
                    # The data set of `data` (Explicit VR Little Endian) without its Pixel Data and with
                    # a private OB element of `pad` zero bytes appended, (0009,0010) LO creator and
                    # (0009,1000) OB: a huge element where a reader stopping before Pixel Data does not stop.
                    cut = data.find(b"\xe0\x7f\x10\x00")
                    stripped = data[:cut] if cut > 0 else data
                    creator = b"\x09\x00\x10\x00LO\x04\x00PXPX"
                    pad = total - len(stripped) - len(creator) - 12
                    element = b"\x09\x00\x00\x10OB\x00\x00" + struct.pack("<I", pad)
                    tail = b"\r\n--pxb--\r\n"
                    self.start(len(head) + len(stripped) + len(creator) + len(element) + pad + len(tail))
                    self.wfile.write(head + stripped + creator + element)
                    chunk = bytes(1 << 20)
                    while pad > 0:
                        n = min(pad, len(chunk))
                        self.wfile.write(chunk[:n])
                        pad -= n
                    self.wfile.write(tail)
                    return
                body = whole[: -len(b"--pxb--\r\n")] + b"--pxb\r\nContent-Type: application/dicom\r\n\r\n" + data[: len(data) // 2]
                self.start(len(body) * 2 if kind == "lying" else None)
                self.wfile.write(body)
                self.wfile.flush()
                self.close_connection = True
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// Starts ``scriptedServer`` serving `file`; returns it and its port.
    static func startScriptedServer(
        _ context: OrthancCommandPeer.Context, file: String, name: String, environment: [String: String] = [:]
    )
        async throws -> (PeerProcess, Int)
    {
        let server = try PeerProcess(
            TestSupport.python, ["-c", Self.scriptedServer, file], logFile: context.work + "/\(name).log",
            environment: environment)
        let firstLine = { String(server.log.split(separator: "\n").first ?? "") }
        let ready = await server.waitFor(seconds: 20) { Int(firstLine()) != nil }
        guard ready, let port = Int(firstLine()) else {
            server.kill()
            throw PeerProcess.PeerFailed(description: "the scripted DICOMweb server did not start: \(server.log)")
        }
        return (server, port)
    }

    static func files(under root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter {
            $0.hasSuffix(".dcm") || $0.contains("px-web-")
        }
    }

    @Test("a server that stops mid-multipart: JSON error, non-zero exit, no partial file anywhere under the root")
    func truncatedMultipart() async throws {
        let context = try Self.context()
        let file = try #require(context.corpus.files.first)
        let (server, port) = try await Self.startScriptedServer(context, file: file, name: "truncating-server")
        defer { server.kill() }
        for kind in ["eof", "lying"] {
            let root = context.work + "/truncated-\(kind)"
            let run = try await PeerHarness.runAsync(
                "px-get", ["http://127.0.0.1:\(port)/\(kind)", "--StudyInstanceUID", "1.2.3", "-d", root])
            #expect(run.exitCode != 0, "\(kind): \(run.stdout)")
            #expect(run.json?["status"]?.stringValue == "error", "\(kind): \(run.stdout)")
            // A transport failure of the WADO-RS retrieval, never dressed as a DIMSE C-GET.
            #expect(run.json?["error"]?["message"]?.stringValue?.contains("C-GET") == false, "\(kind): \(run.stdout)")
            // The first, complete part is placed; the broken second part is nowhere.
            let left = Self.files(under: root)
            #expect(left.count <= 1, "\(kind): \(left)")
            #expect(!left.contains { $0.contains("px-web-") }, "\(kind): a temporary file was left: \(left)")
            for name in left {
                let data = try #require(FileManager.default.contents(atPath: root + "/" + name))
                #expect(
                    data == FileManager.default.contents(atPath: file),
                    "\(kind): \(name) is not the complete first part")
            }
        }
    }

    @Test("a WADO-RS part that is not an instance: a partial failure named WADO-RS (never C-GET), the good part placed")
    func wadoFailureNamesItsTransaction() async throws {
        let context = try Self.context()
        let file = try #require(context.corpus.files.first)
        let (server, port) = try await Self.startScriptedServer(context, file: file, name: "notdicom-server")
        defer { server.kill() }
        let root = context.work + "/notdicom"
        let run = try await PeerHarness.runAsync(
            "px-get", ["http://127.0.0.1:\(port)/notdicom", "--StudyInstanceUID", "1.2.3", "-d", root])
        #expect(run.exitCode != 0, "\(run.stdout)")
        #expect(run.json?["error"]?["code"]?.stringValue == "partialFailure", "\(run.stdout)")
        let message = run.json?["error"]?["message"]?.stringValue ?? ""
        #expect(message.hasPrefix("WADO-RS: 1 of 2 sub-operations failed"), "\(run.stdout)")
        #expect(!message.contains("C-GET"), "\(run.stdout)")
        #expect(
            run.json?["data"]?["targets"]?.arrayValue?.first?["error"]?["message"]?.stringValue == message,
            "\(run.stdout)")
        #expect(Self.files(under: root).count == 1, "\(run.stdout)")
    }

    @Test(
        "503 with Retry-After is retried (bounded), 401 without credentials is an error; the token never shows in output"
    )
    func retriesAndCredentials() async throws {
        let context = try Self.context()
        let file = try #require(context.corpus.files.first)
        let (server, port) = try await Self.startScriptedServer(context, file: file, name: "scripted-server")
        defer { server.kill() }
        // --parallel 1: one WADO-RS request for the study (with more, px first lists its series by QIDO-RS).
        let busy = try await PeerHarness.runAsync(
            "px-get",
            [
                "http://127.0.0.1:\(port)/busy", "--StudyInstanceUID", "1.2.3", "-d", context.work + "/busy",
                "--parallel", "1",
            ])
        #expect(busy.exitCode == 0, "\(busy.stdout) \(busy.stderr)")
        #expect(busy.json?["data"]?["completed"] == .number("1"), "\(busy.stdout)")
        #expect(
            server.log.components(separatedBy: "/busy/").count - 1 == 3,
            "expected two 503s then a success: \(server.log)")

        let denied = try await PeerHarness.runAsync(
            "px-get", ["http://127.0.0.1:\(port)/auth", "--StudyInstanceUID", "1.2.3", "-d", context.work + "/auth"])
        #expect(denied.exitCode == 1, "\(denied.stdout)")
        #expect(denied.json?["error"]?["details"]?["httpStatus"]?.stringValue == "401", "\(denied.stdout)")
        #expect(
            denied.json?["error"]?["details"]?["archiveMessage"]?.stringValue == "credentials required",
            "\(denied.stdout)")
        #expect(Self.files(under: context.work + "/auth").isEmpty)

        let allowed = try await PeerHarness.runAsync(
            "px-get",
            [
                "http://127.0.0.1:\(port)/auth", "--StudyInstanceUID", "1.2.3", "-d", context.work + "/auth",
                "--log-level", "trace",
            ],
            environment: ["PX_DICOMWEB_TOKEN": "s3cret"])
        #expect(allowed.exitCode == 0, "\(allowed.stdout) \(allowed.stderr)")
        #expect(allowed.json?["data"]?["completed"] == .number("1"), "\(allowed.stdout)")
        #expect(server.log.contains("Bearer s3cret"))
        #expect(
            !allowed.stdout.contains("s3cret") && !allowed.stderr.contains("s3cret"),
            "the token leaked into px's output")

        // A config node with `url`, `auth` and `credentials_file`.
        let secret = context.work + "/token"
        try "s3cret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let config = context.work + "/px.toml"
        try """
        [nodes.web]
        url = "http://127.0.0.1:\(port)/auth"
        auth = "bearer"
        credentials_file = "\(secret)"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let echo = try await PeerHarness.runAsync("px-echo", ["web"], environment: ["PX_CONFIG": config])
        #expect(echo.exitCode == 0, "\(echo.stdout) \(echo.stderr)")
        #expect(echo.json?["backend"]?.stringValue == "dicomweb", "\(echo.stdout)")
        #expect(!echo.stdout.contains("s3cret"))
        #expect(echo.json?["data"]?["httpStatus"] == .number("200"), "\(echo.stdout)")
        #expect(echo.json?["data"]?["matches"] == .number("0"), "\(echo.stdout)")
        // 200 with a web page is not a QIDO-RS answer: px-echo says so.
        let page = try await PeerHarness.runAsync("px-echo", ["http://127.0.0.1:\(port)/html"])
        #expect(page.exitCode == 1, "\(page.stdout)")
        #expect(page.json?["error"]?["code"]?.stringValue == "invalidResponse", "\(page.stdout)")
        let missing = try await PeerHarness.runAsync("px-echo", ["web"], environment: ["PX_CONFIG": config + ".absent"])
        #expect(missing.exitCode == 64, "\(missing.stdout)")
    }

    @Test("WADO-RS of one 1 GiB instance: placed complete, px-get's peak RSS under 100 MB")
    func largeInstanceMemory() async throws {
        let context = try Self.context()
        let file = try #require(context.corpus.files.first)
        let size = 1 << 30
        let (server, port) = try await Self.startScriptedServer(
            context, file: file, name: "large-server", environment: ["PX_LARGE_BYTES": String(size)])
        defer { server.kill() }
        let root = context.work + "/large"
        // getrusage(RUSAGE_CHILDREN).ru_maxrss: the peak resident set of px-get, in KiB.
        let measure =
            "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)"
        let run = try await PeerHarness.runAsync(
            TestSupport.python,
            [
                "-c", measure, TestSupport.binDirectory + "/px-get", "http://127.0.0.1:\(port)/large",
                "--StudyInstanceUID", "1.2.3", "-d", root,
            ])
        let lines = run.stdout.split(separator: "\n")
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
        let json = try #require(lines.dropLast().last.flatMap { try? JSONParser.parse(String($0)) }, "\(run.stdout)")
        let instance = try #require(
            json["data"]?["gets"]?.arrayValue?.first?["instances"]?.arrayValue?.first, "\(run.stdout)")
        let path = try #require(instance["path"]?.stringValue)
        let placed = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(placed == size)
        #expect(
            instance["SOPInstanceUID"]?.stringValue
                == (try Part10File(contentsOf: file).dataSet.string(.sopInstanceUID)))
        let peakKiB = try #require(lines.last.flatMap { Int($0) }, "\(run.stdout)")
        #expect(peakKiB < 100 * 1000, "px-get peaked at \(peakKiB) KiB resident for a \(size)-byte instance")
        try FileManager.default.removeItem(atPath: root)
    }

    @Test(
        "a config node's transfer_syntax goes into the Accept header: Orthanc transcodes, the data set is the loaded one"
    )
    func transferSyntaxNegotiation() async throws {
        let context = try Self.context()
        let (study, instances) = try #require(context.corpus.studies.first)
        let config = context.work + "/px-ts.toml"
        try """
        [nodes.implicit]
        url = "\(Self.url(context))"
        transfer_syntax = "1.2.840.10008.1.2"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let root = context.work + "/wado-implicit"
        let run = try await PeerHarness.runAsync(
            "px-get", ["implicit", "--StudyInstanceUID", study, "-d", root], environment: ["PX_CONFIG": config])
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
        let reported = run.json?["data"]?["gets"]?.arrayValue?.first?["instances"]?.arrayValue ?? []
        #expect(reported.count == instances.count)
        #expect(reported.allSatisfy { $0["transferSyntaxUID"]?.stringValue == "1.2.840.10008.1.2" }, "\(run.stdout)")
        for (uid, file) in try Self.retrieved(run) {
            #expect(try Part10File(contentsOf: file.path).transferSyntax.uid == "1.2.840.10008.1.2")
            let original = try #require(context.corpus.dataSets[uid])
            let differences = OrthancCommandTests.differences(original, file.dataSet)
            #expect(differences.isEmpty, "\(uid) differs after transcoding in \(differences)")
        }
    }

    @Test("px-find --limit: QIDO-RS limit gives as many matches as C-FIND with C-CANCEL, and the same status")
    func limit() async throws {
        let context = try Self.context()
        let dimse = try await PeerHarness.runAsync(
            "px-find",
            [
                "\(OrthancCommandPeer.orthancAETitle)@127.0.0.1:\(context.dicomPort)", "--backend", "native", "--level",
                "image", "--limit", "3",
            ])
        let web = try await PeerHarness.runAsync("px-find", [Self.url(context), "--level", "image", "--limit", "3"])
        #expect(web.exitCode == dimse.exitCode, "\(web.stdout)")
        #expect(web.json?["data"]?.arrayValue?.count == 3, "\(web.stdout)")
        #expect(web.json?["data"]?.arrayValue?.count == dimse.json?["data"]?.arrayValue?.count)
        #expect(web.json?["status"] == dimse.json?["status"], "\(web.stdout) vs \(dimse.stdout)")
    }
}
