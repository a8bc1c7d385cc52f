import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

/// C-FIND, C-MOVE and C-GET of ``DICOMAssociation`` against DCMTK's dcmqrscp (fork mode) on 127.0.0.1,
/// with our own ``DICOMServer`` as the C-MOVE destination.
@Suite(
    "Query/retrieve against dcmqrscp", .tags(.integration), .integrationTier, .serialized,
    .requires("dcmqrscp", "echoscu", "storescu", "dcmftest", "python3", pythonModules: ["pydicom"]),
    .timeLimit(.minutes(10))
)
struct QueryRetrieveInteropTests {
    static func script(_ name: String, _ arguments: [String], environment: [String: String] = [:]) async throws
        -> String
    {
        let result = try await TestSupport.run(
            "bash", [TestSupport.repositoryRoot + "/scripts/" + name] + arguments, environment: environment)
        #expect(result.status == 0, "\(name): \(result.output)")
        return result.output
    }

    @Test("find at study, series and image level; find with a limit; move to our SCP; get on one association")
    func queryRetrieve() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let corpus = dir + "/corpus"
            let moved = dir + "/moved"
            let got = dir + "/got"
            for path in [moved, got] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            let generated = try await TestSupport.run(
                TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", corpus])
            try #require(generated.status == 0, "\(generated.output)")
            let originals = TestSupport.dicomFiles(in: corpus)
            try #require(originals.count == 6)
            var byUID: [String: String] = [:]
            for path in originals {
                byUID[try Part10File(contentsOf: path).dataSet.string(.sopInstanceUID) ?? ""] = path
            }
            let originalByUID = byUID

            try await TestSupport.withServer(aeTitle: "PXSCP", directory: moved) { server in
                let qr = dir + "/qr"
                let portText = try await Self.script(
                    "dcmqrscp-start.sh", [qr], environment: ["PX_QR_DESTS": "PXSCP=127.0.0.1:\(server.localPort)"])
                defer { TestSupport.killPeer(pidFile: qr + "/dcmqrscp.pid") }
                let port = try #require(
                    Int(portText.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? ""))
                _ = try await Self.script("dcmqrscp-load.sh", [qr, corpus])
                let peer = DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "QRSCP")
                let client = DICOMClient(
                    configuration: .init(callingAETitle: "PXSCU"), logger: TestSupport.logger("px.test.client"))

                // C-FIND: studies, then their series, then their instances.
                var instanceUIDs: [String] = []
                var firstStudy = ""
                try await client.withAssociation(to: peer, proposing: [.find(.studyRoot)]) { association in
                    var keys = DataSet()
                    keys.set(.patientID, vr: .LO, string: "")
                    keys.set(.studyInstanceUID, vr: .UI, string: "")
                    var studies: [String] = []
                    for try await response in try await association.find(keys, model: .studyRoot, level: .study) {
                        if let identifier = response.identifier {
                            studies.append(try #require(identifier.string(.studyInstanceUID)))
                        } else {
                            #expect(response.status == .success)
                        }
                    }
                    #expect(studies.count == 5)
                    firstStudy = studies.sorted().first ?? ""
                    for study in studies {
                        var seriesKeys = DataSet()
                        seriesKeys.set(.studyInstanceUID, vr: .UI, string: study)
                        seriesKeys.set(.seriesInstanceUID, vr: .UI, string: "")
                        seriesKeys.set(.modality, vr: .CS, string: "")
                        var series: [String] = []
                        for try await response in try await association.find(
                            seriesKeys, model: .studyRoot, level: .series)
                        {
                            if let uid = response.identifier?.string(.seriesInstanceUID) { series.append(uid) }
                        }
                        #expect(!series.isEmpty)
                        for uid in series {
                            var imageKeys = DataSet()
                            imageKeys.set(.studyInstanceUID, vr: .UI, string: study)
                            imageKeys.set(.seriesInstanceUID, vr: .UI, string: uid)
                            imageKeys.set(.sopInstanceUID, vr: .UI, string: "")
                            for try await response in try await association.find(
                                imageKeys, model: .studyRoot, level: .image)
                            {
                                if let sop = response.identifier?.string(.sopInstanceUID) { instanceUIDs.append(sop) }
                            }
                        }
                    }
                    // A limit of 1: one match, a C-CANCEL, then the final response (dcmqrscp ignores the cancel).
                    var limited: [FindResponse] = []
                    for try await response in try await association.find(
                        keys, model: .studyRoot, level: .study, limit: 1)
                    {
                        limited.append(response)
                    }
                    #expect(limited.filter { $0.identifier != nil }.count == 1)
                    #expect(limited.last?.status.isPending == false)
                }
                #expect(Set(instanceUIDs) == Set(originalByUID.keys))

                // C-MOVE of the first study to our own SCP.
                var studyKeys = DataSet()
                studyKeys.set(.studyInstanceUID, vr: .UI, string: firstStudy)
                var progress: [SubOperationCounts] = []
                let moveResult = try await client.withAssociation(to: peer, proposing: [.move(.studyRoot)]) {
                    association in
                    try await association.move(studyKeys, model: .studyRoot, level: .study, destination: "PXSCP") {
                        progress.append($0)
                    }
                }
                #expect(moveResult.status == .success)
                let movedFiles = TestSupport.dicomFiles(in: moved)
                #expect(moveResult.subOperations.completed.map(Int.init) == movedFiles.count)
                #expect(moveResult.subOperations.failed ?? 0 == 0)
                #expect(!movedFiles.isEmpty)
                for file in movedFiles {
                    let uid = try Part10File(contentsOf: file).dataSet.string(.sopInstanceUID) ?? ""
                    let original = try #require(originalByUID[uid])
                    #expect(try TestSupport.dataSetJSON(file) == TestSupport.dataSetJSON(original))
                }

                // C-GET of the same study on one association.
                let getResult = try await client.withAssociation(
                    to: peer, proposing: ProposedPresentationContext.get(.studyRoot)
                ) { association in
                    try await association.get(
                        studyKeys, model: .studyRoot, level: .study, storage: DirectoryStorage(directory: got),
                        directory: got)
                }
                #expect(getResult.status == .success)
                let gotFiles = TestSupport.dicomFiles(in: got)
                #expect(getResult.subOperations.completed.map(Int.init) == gotFiles.count)
                #expect(gotFiles.count == movedFiles.count)
                for file in gotFiles {
                    let uid = try Part10File(contentsOf: file).dataSet.string(.sopInstanceUID) ?? ""
                    let original = try #require(originalByUID[uid])
                    #expect(try TestSupport.dataSetJSON(file) == TestSupport.dataSetJSON(original))
                }
            }
        }
    }
}
