import Testing

@testable import DICOMData

/// Inputs the libFuzzer targets of Fuzz/ found (scripts/fuzz.sh), kept as regression tests.
@Suite("Fuzzer findings: DICOM JSON")
struct DICOMJSONFuzzRegressionTests {
    /// fuzz-json, from pydicom's JSON of a test file with two bytes of its SOP Class UID mutated: the UI value
    /// was stored as UTF-8, rendered back as default-repertoire text (each U+FFFD as three Latin-1
    /// characters), and grew with every round trip. A value outside the default repertoire in a VR that
    /// Specific Character Set does not cover is refused now (PS3.5 §6.1.2.3).
    @Test(
        "a UI, CS, DA or AE value outside the default repertoire is refused, not mangled",
        arguments: ["UI", "CS", "DA", "AE"])
    func nonASCIIDefaultRepertoireValue(vr: String) {
        let text = #"{"00080016": {"vr": "\#(vr)", "Value": ["1.2.840.10008\#u{FFFD}\#u{FFFD}.1.4.1.1.7"]}}"#
        let error = #expect(throws: DICOMDataError.self) { try DataSet(dicomJSONText: text) }
        #expect(error?.code == .invalidJSON)
    }

    @Test("an ASCII UI value and a non-ASCII PN value still round-trip")
    func textValuesRoundTrip() throws {
        let text =
            #"{"00080016": {"vr": "UI", "Value": ["1.2.840.10008.5.1.4.1.1.7"]}, "00100010": {"vr": "PN", "Value": [{"Alphabetic": "Müller"}]}}"#
        let set = try DataSet(dicomJSONText: text)
        let rendered = set.dicomJSON()
        #expect(try DataSet(dicomJSON: rendered).dicomJSON() == rendered)
        #expect(set.string(.patientName) == "Müller")
        #expect(set.string(Tag(0x0008, 0x0016)) == "1.2.840.10008.5.1.4.1.1.7")
    }

    /// fuzz-json (CI's fuzz smoke): (0008,0005) with VR SS and no value was written back as
    /// `{"vr": "SS", "Value": ["ISO_IR 192"]}`, a string under a number VR, which px's own reader refuses.
    @Test("a Specific Character Set under a VR other than CS round-trips by its VR")
    func specificCharacterSetUnderAnotherVR() throws {
        let text =
            #"{"00080005": {"vr": "SS"}, "00080008": {"Value": ["ORIGINAL", "PRIMARY", "SINGLE PLANE"], "vr": "CS"}}"#
        let set = try DataSet(dicomJSONText: text)
        let rendered = set.dicomJSON()
        let reread = try DataSet(dicomJSON: rendered)
        #expect(reread.dicomJSON() == rendered)
        #expect(rendered.serialized().contains(#""00080005":{"vr":"SS"}"#))
    }

    /// Integer VRs converted a JSON number with `Int(_:)`, which traps on a value no Int can hold: one
    /// hostile number in a DICOM JSON file ended the process.
    @Test(
        "an integer value out of range is an error, not a trap",
        arguments: [
            ("US", "1e300"), ("SL", "-1e19"), ("SV", "1e19"), ("UV", "-1"), ("UV", "\"nan\""), ("UL", "\"inf\""),
        ])
    func integerOutOfRange(vr: String, number: String) {
        let text = #"{"00280010": {"vr": "\#(vr)", "Value": [\#(number)]}}"#
        let error = #expect(throws: DICOMDataError.self) { try DataSet(dicomJSONText: text) }
        #expect(error?.code == .invalidJSON)
    }

    @Test("integer values in range keep their value, truncated toward zero")
    func integerInRange() throws {
        let set = try DataSet(
            dicomJSONText:
                #"{"00280010": {"vr": "US", "Value": [512.9]}, "00720078": {"vr": "UV", "Value": [18446744073709549568]}}"#
        )
        #expect(set[Tag(0x0028, 0x0010)]?.bytes == [0x00, 0x02])
        #expect(set[Tag(0x0072, 0x0078)]?.bytes == [0x00, 0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    }
}
