import DICOMData
import PXStorage
import Testing

/// Inputs the libFuzzer target fuzz-layout (Fuzz/) found, kept as regression tests.
@Suite("Fuzzer findings: storage layout")
struct StorageLayoutFuzzRegressionTests {
    /// ".\u{0651}" is one Character that is not ".", yet its first byte is a dot: a hidden name.
    @Test("no sanitised value or component starts with a dot byte, combining marks or not")
    func leadingDotBeforeCombiningMark() throws {
        let layout = try StorageLayout(template: "{PatientID}/{SOPInstanceUID}")
        for value in [".\u{0651}x", "..\u{0651}", ".\u{0345}"] {
            #expect(layout.sanitise(value).utf8.first != UInt8(ascii: "."), "\(value.unicodeScalars.map { $0.value })")
            var ds = DataSet()
            ds.set(.specificCharacterSet, vr: .CS, string: "ISO_IR 192")
            ds.set(.patientID, vr: .LO, string: value)
            for component in layout.components(for: ds) {
                #expect(component.utf8.first != UInt8(ascii: "."))
            }
        }
    }

    /// fuzz-layout: a template with "/" before a combining mark (U+0747) kept the "/" inside one component.
    @Test("a '/' before a combining mark in a template still separates components")
    func slashBeforeCombiningMark() throws {
        let layout = try StorageLayout(template: "x/\u{0747}y/{SOPInstanceUID}.dcm")
        let components = layout.components(for: DataSet())
        #expect(components.count == 3)
        #expect(components.allSatisfy { !$0.utf8.contains(UInt8(ascii: "/")) })
        #expect(throws: StorageError.self) { try StorageLayout(template: "x/\u{0747}/../y") }
    }
}
