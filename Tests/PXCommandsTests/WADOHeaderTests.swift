import DICOMData
import DICOMWeb
import Logging
import PXCore
import Testing

/// WADO-RS records the header it parsed while receiving (issue 21), as the native C-GET does, so a folder
/// place indexes a retrieved instance without reading the file again.
extension DICOMWebCommandTests {
    @Test("WADO-RS: each retrieved instance carries its header as parsed on receipt, the one read from the placed file")
    func wadoInstancesCarryTheirHeader() async throws {
        let context = try Self.context()
        let place = try DICOMWebPlace(url: Self.url(context))
        let service = DICOMWebService(place: place)
        let root = context.work + "/wado-headers"
        var checked = 0
        for study in context.corpus.studies.keys.sorted() {
            let result = try await service.get(
                try GetRequest(studyInstanceUID: study, root: root), logger: Logger(label: "px-test")
            ) { _ in }
            #expect(result.status.isSuccess, "\(study)")
            #expect(result.operation == "WADO-RS")
            for instance in result.instances {
                let header = try #require(instance.header, "no header recorded for \(instance.path)")
                let read = try Part10File.readHeader(contentsOf: instance.path)
                #expect(header.transferSyntax.uid == read.transferSyntax.uid, "\(instance.path)")
                #expect(OrthancCommandTests.differences(read.meta, header.meta).isEmpty, "\(instance.path)")
                let differences = OrthancCommandTests.differences(read.dataSet, header.dataSet)
                #expect(differences.isEmpty, "\(instance.path): the recorded header differs in \(differences)")
                checked += 1
            }
        }
        #expect(checked == context.corpus.dataSets.count)
    }
}
