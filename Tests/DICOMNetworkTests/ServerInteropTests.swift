import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import PXTestSupport
import Testing

/// DCMTK's tools as clients of ``DICOMServer`` on 127.0.0.1.
@Suite(
    "DICOMServer with DCMTK clients", .tags(.integration), .integrationTier, .serialized,
    // make-corpus.sh needs the DCMTK tools after the peer itself, and python3.
    .requires("echoscu", "storescu", "dump2dcm", "dcmodify", "dcmcjpeg", "dcmcrle", "dcmftest", "dcmdump", "python3"),
    .timeLimit(.minutes(10))
)
struct ServerInteropTests {
    @Test("echoscu succeeds")
    func echo() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir) { server in
                let result = try await TestSupport.run(
                    "echoscu", ["-aec", "PXSCP", "127.0.0.1", "\(server.localPort)"])
                #expect(result.status == 0, "\(result.output)")
            }
        }
    }

    @Test("echoscu with a wrong called AE title is rejected (called AE title not recognized)")
    func echoWrongAET() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir) { server in
                let result = try await TestSupport.run(
                    "echoscu", ["-aec", "WRONG", "127.0.0.1", "\(server.localPort)"])
                #expect(result.status != 0)
                #expect(result.output.contains("Called AE Title Not Recognized"), "\(result.output)")
            }
        }
    }

    @Test("storescu of the corpus arrives as identical data sets")
    func storeCorpus() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let corpus = dir + "/corpus"
            let received = dir + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let files = try await TestSupport.makeCorpus(in: corpus)
            try #require(files.count > 10)
            // storescu proposes only the contexts a run needs; each compressed syntax needs its own flag.
            let batches: [(flags: [String], files: [String])] = [
                (["--propose-lossless"], files.filter { $0.hasSuffix("-jpeg-lossless-sv1.dcm") }),
                (["--propose-jpeg8"], files.filter { $0.hasSuffix("-jpeg-baseline.dcm") }),
                (["--propose-rle"], files.filter { $0.hasSuffix("-rle.dcm") }),
                ([], files.filter { !$0.contains("-jpeg-") && !$0.hasSuffix("-rle.dcm") }),
            ]
            try await TestSupport.withServer(directory: received) { server in
                for batch in batches where !batch.files.isEmpty {
                    let result = try await TestSupport.run(
                        "storescu",
                        ["-aec", "PXSCP", "--required"] + batch.flags + ["127.0.0.1", "\(server.localPort)"]
                            + batch.files)
                    #expect(result.status == 0, "\(result.output)")
                }
            }
            // Same transfer syntax: the data set bytes must be identical; otherwise the decoded data sets.
            var byUID: [String: [Part10File]] = [:]
            var pathsByUID: [String: [String]] = [:]
            for file in files {
                let original = try Part10File(contentsOf: file)
                guard let uid = original.dataSet.string(.sopInstanceUID) else { continue }
                byUID[uid, default: []].append(original)
                pathsByUID[uid, default: []].append(file)
            }
            var compared = 0
            for (uid, originals) in byUID {
                let copy = received + "/" + uid + ".dcm"
                guard FileManager.default.fileExists(atPath: copy) else {
                    Issue.record("\(uid) was not received")
                    continue
                }
                let stored = try Part10File(contentsOf: copy)
                let path = pathsByUID[uid]![0]
                // storescu itself re-encodes undefined-length sequences with defined lengths (storescp receives
                // the same), so those files are compared as decoded data sets only.
                if stored.transferSyntax == originals[0].transferSyntax {
                    if !path.contains("-undeflen-") {
                        #expect(try TestSupport.dataSetBytes(copy) == TestSupport.dataSetBytes(path), "\(path)")
                    }
                } else {
                    // storescu converted it (big endian and deflated are proposed as Explicit VR Little Endian).
                    #expect(
                        originals[0].transferSyntax.isBigEndian || originals[0].transferSyntax.isDeflated, "\(path)")
                }
                #expect(try TestSupport.dataSetJSON(copy) == TestSupport.dataSetJSON(path), "\(path)")
                compared += 1
            }
            #expect(compared > 10)
        }
    }
}
