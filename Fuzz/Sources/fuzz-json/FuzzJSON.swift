import DICOMData
import FuzzSupport

// Input: JSON text (any bytes). It is parsed, and when it is a DICOM JSON data set (PS3.18 §F.2), or
// an array holding one, it is turned into a data set as px-push and the tests read such files.
//
// Invariants:
// - parsing is total: a value or a DICOMDataError, within the nesting limit;
// - a parsed value serialises (compact and pretty) to text that parses to the same value;
// - a DICOM JSON data set renders back to DICOM JSON that reads as a data set again and renders to the
//   same JSON (one round trip reaches the canonical form), and it writes in Explicit VR Little Endian.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let value = try? JSONParser.parse(input) else { return 0 }

    for pretty in [false, true] {
        let text = value.serialized(pretty: pretty)
        let again: JSONValue
        do {
            again = try JSONParser.parse(text)
        } catch {
            fuzzCheck(false, "serialised JSON (pretty: \(pretty)) does not parse: \(error)")
            return 0
        }
        fuzzCheck(again == value, "JSON value changes across serialisation (pretty: \(pretty))")
    }

    var json = value
    if case .array(let sets) = json, sets.count == 1 { json = sets[0] }
    guard let dataSet = try? DataSet(dicomJSON: json) else { return 0 }
    let rendered = dataSet.dicomJSON()
    let reread: DataSet
    do {
        reread = try DataSet(dicomJSON: rendered)
    } catch {
        fuzzCheck(false, "px's own DICOM JSON does not read back: \(error)\n\(rendered.serialized())")
        return 0
    }
    let renderedAgain = reread.dicomJSON()
    fuzzCheck(
        renderedAgain == rendered,
        "DICOM JSON changes across a round trip:\n\(rendered.serialized())\n\(renderedAgain.serialized())")
    do {
        _ = try DataSetWriter.encode(dataSet, transferSyntax: .explicitVRLittleEndian)
    } catch {
        fuzzCheck(false, "a data set read from DICOM JSON does not write: \(error)")
    }
    _ = dataSet.textDump()
    return 0
}
